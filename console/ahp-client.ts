import { AhpClient } from "../ahp/ahp-client.js";
import { ErrorCode } from "../ahp/error-codes.js";
import { JsonRpcError } from "../ahp/json-rpc-error.js";
import type { ActionEnvelope } from "../ahp/types.js";
import { Backoff } from "../lib/backoff.js";

/** A channel's state as the gateway sends it (the page reads root and terminal states alike). */
export interface Snapshot {
  resource: string;
  state: any;
  fromSeq: number;
  /**
   * A terminal's rendered screen, or why there is none (docs/ahp.md, "Terminal screens"); where its
   * content ends in the runner's output, and the output since the offset the page asked to resume from,
   * or why there is none (docs/ahp.md, "Output offsets and resume").
   */
  _meta?: { screen?: RenderedScreen; screenUnavailable?: string; offset?: number; resume?: { from: number; data: string }; resumeUnavailable?: string };
}

/** A terminal's screen as the gateway renders it: `data` written into a reset terminal of `cols` x `rows` shows it. */
export interface RenderedScreen {
  data: string;
  cols: number;
  rows: number;
  /** Commands whose lines are in `data`: `line` is the row of `data` (0 = its first) ending the command line. */
  commands: Array<{ commandId: string; line: number; exitCode?: number }>;
}

/** Asks for terminals' screens with their snapshots, so a page starts from the screen as it is rather than replaying output meant for other sizes. */
const WITH_SCREENS = { _meta: { screen: true } };

/** How the page learns what happens on the connection. */
export interface ClientEvents {
  /**
   * A connection is (again) initialized: `snapshots` are fresh states of channels to show (none when
   * missed actions are replayed instead), `lost` the watched channels that no longer exist.
   */
  ready(snapshots: Snapshot[], lost: string[]): void;
  /**
   * The connection is back and what it missed has been applied: `resumed` when the gateway knew this
   * page (a `reconnect` it accepted), false when the page started over with `initialize`.
   */
  settled(resumed: boolean): void;
  /** An action envelope, replayed after a reconnect or live. */
  action(envelope: ActionEnvelope): void;
  /** The socket is gone; a reconnect is coming. */
  offline(reason: string): void;
  /** Where the output the page shows of each terminal ends (runner offsets), to resume from on a new socket. */
  shownOffsets(): Record<string, number>;
}

/** A JSON-RPC error the gateway answered with. */
export { JsonRpcError as RpcError };

/** The error code of a request that needs a signed-in user. */
export const AUTH_REQUIRED = ErrorCode.AuthRequired;

/** Shortest pause before reconnecting: a socket dropped by the network while the gateway lives is back almost at once. */
const RECONNECT_MIN_MS = 250;
/** Longest pause between reconnect attempts: a gateway that is down is not called in a tight loop, and a restarted one is found within seconds. */
const RECONNECT_MAX_MS = 5_000;
/** How every console page's client id starts, so that pages can tell each other's claims from other clients'. */
export const CONSOLE_CLIENT_PREFIX = "console-";
/** The name the page gives itself in `initialize`'s `clientInfo`, so other pages can tell a console page's claims. */
export const CONSOLE_CLIENT_NAME = "ahp-terminal-console";
/** The versions the page speaks, newest first. */
const PROTOCOL_VERSIONS = ["1.1.0", "1.0.0", "0.9.0", "0.8.0", "0.7.0", "0.6.0"];

/**
 * The page's AHP connection: initializes, keeps the channels it watches, and when the socket drops
 * comes back with `reconnect` (missed actions replayed) or, if the gateway no longer knows this tab,
 * with `initialize` and fresh snapshots, each carrying the output since what the page shows when the
 * runner still holds it.
 */
export class ConsoleConnection {
  private socket: WebSocket | undefined;
  private handshaken = false;
  private ready = false;
  /** This page's client id (claims made by it name it). */
  readonly clientId = `${CONSOLE_CLIENT_PREFIX}${crypto.randomUUID()}`;
  private readonly watched = new Set<string>(["ahp-root://"]);
  /** Pauses between reconnects, spread so that a gateway's tabs do not all come back at once. */
  private readonly reconnects = new Backoff({ minMs: RECONNECT_MIN_MS, maxMs: RECONNECT_MAX_MS });
  /** The sign-in to repeat on every new socket. */
  private credentials: { resource: string; token: string } | undefined;
  private readonly client: AhpClient;
  /** Envelopes that came while a handshake was still being completed: the page gets them after its snapshots. */
  private early: ActionEnvelope[] | undefined;

  constructor(
    private readonly url: string,
    private readonly events: ClientEvents,
  ) {
    this.client = new AhpClient({ send: (text) => this.socket?.send(text) }, { action: (envelope) => (this.early ? this.early.push(envelope) : this.events.action(envelope)) });
  }

  /** Opens the connection (and keeps it open). */
  start(): void {
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onopen = () => void this.handshake();
    socket.onmessage = (message) => this.client.receive(String(message.data));
    socket.onclose = (event) => {
      this.ready = false;
      this.client.disconnected(new Error("connection lost"));
      this.events.offline(event.code === 1006 && !this.handshaken ? "cannot connect (is the token in the page's address right?)" : `disconnected (${event.code})`);
      setTimeout(() => this.start(), this.reconnects.next());
    };
  }

  /** True while a socket is open and initialized: what is dispatched now reaches the gateway. */
  get online(): boolean {
    return this.ready;
  }

  /** A request's result. */
  call(method: string, params: unknown): Promise<any> {
    return this.client.call(method, params);
  }

  /** Signs this page in as a user (and again after every reconnect); throws RpcError for a wrong token. */
  async signIn(resource: string, token: string): Promise<void> {
    await this.client.authenticate(resource, token);
    this.credentials = { resource, token };
  }

  /** Dispatches an action (again, when given the `clientSeq` it first went with) and returns its `clientSeq`. */
  dispatch(channel: string, action: Record<string, unknown>, clientSeq?: number): number {
    return this.client.dispatch(channel, action, { clientSeq });
  }

  /** Subscribes to a channel (again) and returns its snapshot. */
  async watch(channel: string): Promise<Snapshot> {
    this.watched.add(channel);
    try {
      const { snapshot } = await this.client.call("subscribe", { channel, ...WITH_SCREENS });
      return snapshot;
    } catch (err) {
      this.watched.delete(channel);
      throw err;
    }
  }

  /** Stops following a channel. */
  unwatch(channel: string): void {
    this.watched.delete(channel);
    this.client.notify("unsubscribe", { channel });
  }

  private async handshake(): Promise<void> {
    this.early = [];
    // A handshake that failed is followed by another on a new socket, with fresh snapshots: what came meanwhile is stale.
    await this.completeHandshake().finally(() => (this.early = undefined));
  }

  private async completeHandshake(): Promise<void> {
    const subscriptions = [...this.watched];
    // Screens for a page that starts over, output since what it shows for a page that goes on, and offsets from now on.
    const resumeFrom = this.events.shownOffsets();
    const extras = { _meta: { screen: true, offsets: true, resumeFrom } };
    let snapshots: Snapshot[] = [];
    let replayed: ActionEnvelope[] = [];
    let lost: string[];
    const resumed = this.handshaken
      ? await this.client
          .call("reconnect", { channel: "ahp-root://", clientId: this.clientId, lastSeenServerSeq: this.client.lastSeenServerSeq, subscriptions, ...extras })
          .catch(() => undefined)
      : undefined;
    if (resumed?.type === "replay") {
      replayed = resumed.actions;
      lost = resumed.missing;
    } else if (resumed) {
      snapshots = resumed.snapshots;
      lost = absent(subscriptions, snapshots);
    } else {
      // A first connection, or a gateway that no longer knows this tab (it restarted): start over.
      const result = await this.client.initialize({
        protocolVersions: PROTOCOL_VERSIONS,
        clientId: this.clientId,
        clientInfo: { name: CONSOLE_CLIENT_NAME },
        initialSubscriptions: subscriptions,
        ...extras,
      });
      this.handshaken = true;
      snapshots = result.snapshots;
      lost = absent(subscriptions, snapshots);
    }
    this.reconnects.reset();
    if (this.credentials) {
      // A new socket is signed out: sign in again and take back the channels that needed the user.
      await this.client.authenticate(this.credentials.resource, this.credentials.token).catch(() => (this.credentials = undefined));
      for (const channel of this.credentials ? lost.splice(0) : []) {
        const fresh = await this.client.call("subscribe", { channel, _meta: { screen: true, resumeFrom } }).catch(() => undefined);
        if (fresh) snapshots.push(fresh.snapshot);
        else lost.push(channel);
      }
    }
    for (const channel of lost) this.watched.delete(channel);
    this.ready = true;
    this.events.ready(snapshots, lost);
    // The replay came in the reply, before what came on the socket after it.
    const early = this.early ?? [];
    this.early = undefined;
    for (const envelope of replayed) this.client.receiveParsed({ jsonrpc: "2.0", method: "action", params: envelope });
    for (const envelope of early) this.events.action(envelope);
    this.events.settled(resumed !== undefined);
  }
}

function absent(channels: string[], snapshots: Array<{ resource: string }>): string[] {
  return channels.filter((channel) => !snapshots.some((snapshot) => snapshot.resource === channel));
}
