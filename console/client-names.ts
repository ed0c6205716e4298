import { ErrorCode } from "../ahp/error-codes.js";
import { RpcError } from "./ahp-client.js";

/** The gateway's command naming claim holders (docs/ahp.md, "Client names"). */
const CLIENT_NAMES_METHOD = "x-clientNames";
/** Most ids one request asks about: the gateway's limit. */
const MAX_IDS_PER_REQUEST = 256;

/** Who a client is, as far as the gateway knows: the person signed in on it, the name it gave. */
export interface HolderName {
  user?: string;
  client?: string;
}

/** The connection as the names need it. */
export interface NamesConnection {
  readonly online: boolean;
  call(method: string, params: unknown): Promise<any>;
}

/**
 * The names of the clients holding claims, asked of the gateway once per client id it has not been
 * asked about, one request at a time; `onNamed` is called when names arrived. A gateway without the
 * command is not asked again; a failed request is tried again when its ids are next wanted.
 */
export class ClientNames {
  private readonly known = new Map<string, HolderName>();
  private readonly asked = new Set<string>();
  private readonly waiting = new Set<string>();
  private inFlight = false;
  private unsupported = false;

  constructor(
    private readonly connection: NamesConnection,
    private readonly onNamed: () => void,
  ) {}

  /** What is known of a client; undefined until (or unless) the gateway named it. */
  nameOf(clientId: string): HolderName | undefined {
    return this.known.get(clientId);
  }

  /** Asks the gateway about the ids it has not been asked about yet. */
  want(clientIds: Iterable<string>): void {
    for (const id of clientIds) if (!this.asked.has(id)) this.waiting.add(id);
    this.ask();
  }

  /** Asks again about the ids the gateway had no name for (a new socket: clients may have signed in since). */
  retryUnnamed(): void {
    for (const id of this.asked) if (!this.known.has(id)) this.asked.delete(id);
  }

  private ask(): void {
    if (this.inFlight || this.unsupported || !this.connection.online || this.waiting.size === 0) return;
    const ids = [...this.waiting].slice(0, MAX_IDS_PER_REQUEST);
    for (const id of ids) {
      this.waiting.delete(id);
      this.asked.add(id);
    }
    this.inFlight = true;
    this.connection
      .call(CLIENT_NAMES_METHOD, { clientIds: ids })
      .then(
        ({ names }: { names?: Record<string, unknown> }) => {
          let named = false;
          for (const id of ids) {
            const name = holderName(names && Object.hasOwn(names, id) ? names[id] : undefined);
            if (name) this.known.set(id, name);
            named ||= name !== undefined;
          }
          if (named) this.onNamed();
        },
        (err: unknown) => {
          if (err instanceof RpcError && err.code === ErrorCode.MethodNotFound) this.unsupported = true;
          else for (const id of ids) this.asked.delete(id);
        },
      )
      .finally(() => {
        this.inFlight = false;
        this.ask();
      });
  }
}

/** A name as the gateway sent it, its strings kept; undefined when it carries none. */
function holderName(value: unknown): HolderName | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { user, client } = value as { user?: unknown; client?: unknown };
  const name: HolderName = {};
  if (typeof user === "string" && user !== "") name.user = user;
  if (typeof client === "string" && client !== "") name.client = client;
  return name.user || name.client ? name : undefined;
}
