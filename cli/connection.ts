import WebSocket from "ws";

/** A failure the CLI reports in one line and exits 1 for. */
export class CliError extends Error {}

/** An AHP error response. */
export class AhpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Where the gateway is and how to get in. */
export interface Target {
  /** The WebSocket URL, with the connection token in `?tkn=`. */
  url: string;
  /** A user's secret, when the gateway has a users file. */
  userToken?: string;
}

/** The gateway URL from flags or environment, with the connection token folded in as `?tkn=`. */
export function targetFrom(flags: { url?: string; token?: string; "user-token"?: string }, env: NodeJS.ProcessEnv): Target {
  const raw = flags.url ?? env.AHP_URL;
  if (!raw) throw new CliError("no gateway: pass --url ws://HOST:PORT/?tkn=TOKEN or set AHP_URL");
  let url: URL;
  try {
    url = new URL(raw.includes("://") ? raw : `ws://${raw}`);
  } catch {
    throw new CliError(`not a gateway URL: ${raw}`);
  }
  if (url.protocol === "http:") url.protocol = "ws:";
  if (url.protocol === "https:") url.protocol = "wss:";
  const token = flags.token ?? env.AHP_TOKEN;
  if (token) url.searchParams.set("tkn", token);
  const userToken = flags["user-token"] ?? env.AHP_USER_TOKEN;
  return userToken ? { url: url.toString(), userToken } : { url: url.toString() };
}

/** An initialized AHP connection for the CLI: requests, dispatches, and the actions it receives. */
export class AhpConnection {
  private nextId = 1;
  private clientSeq = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  onAction: (envelope: { channel: string; action: { type: string; [key: string]: unknown } }) => void = () => {};
  onClose: (code: number) => void = () => {};

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8"));
      if (frame.id !== undefined) {
        const waiter = this.pending.get(frame.id);
        this.pending.delete(frame.id);
        if (frame.error) waiter?.reject(new AhpError(frame.error.code, frame.error.message));
        else waiter?.resolve(frame.result);
      } else if (frame.method === "action") this.onAction(frame.params);
    });
    socket.on("close", (code) => {
      for (const waiter of this.pending.values()) waiter.reject(new CliError(`the gateway closed the connection (${code})`));
      this.pending.clear();
      this.onClose(code);
    });
  }

  /** Connects, initializes, and signs in when a user token is given; every refusal becomes a readable CliError. */
  static async open(target: Target): Promise<AhpConnection> {
    const where = target.url.replace(/\?.*$/, "");
    const socket = new WebSocket(target.url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("unexpected-response", (_, response) =>
        reject(new CliError(response.statusCode === 401 ? `the gateway at ${where} refused the connection token` : `the gateway at ${where} answered HTTP ${response.statusCode}`)),
      );
      socket.once("error", (err: NodeJS.ErrnoException) =>
        reject(new CliError(err.code === "ECONNREFUSED" || err.code === "ENOTFOUND" ? `cannot reach the gateway at ${where} (${err.code})` : `cannot connect to ${where}: ${err.message}`)),
      );
    });
    const connection = new AhpConnection(socket);
    await connection.call("initialize", {
      channel: "ahp-root://",
      protocolVersions: ["0.9.0", "0.8.0", "0.7.0"],
      clientId: `ahp-term-${process.pid}-${Date.now()}`,
      clientInfo: { name: "ahp-term" },
    });
    if (target.userToken) {
      await connection.call("authenticate", { channel: "ahp-root://", resource: "ahp-terminal-gateway", token: target.userToken }).catch((err: unknown) => {
        throw new CliError(err instanceof AhpError && err.code === -32007 ? "the gateway refused the user token" : String(err));
      });
    }
    return connection;
  }

  /** A request's result; AhpError when the gateway refuses it. */
  call<T = any>(method: string, params: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  /** Dispatches an action to a channel. */
  dispatch(channel: string, action: Record<string, unknown>): void {
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", method: "dispatchAction", params: { channel, clientSeq: this.clientSeq++, action } }));
  }

  /** Closes the socket. */
  close(): void {
    this.socket.close();
  }
}

/** A friendlier message for the refusals every command can meet. */
export function explain(err: unknown, uri?: string): never {
  if (err instanceof AhpError) {
    if (err.code === -32008) throw new CliError(`no terminal at ${uri ?? "that URI"}`);
    if (err.code === -32007) throw new CliError("the gateway wants a sign-in: pass --user-token or set AHP_USER_TOKEN");
    if (err.code === -32009) throw new CliError(`not allowed: ${err.message}`);
    throw new CliError(err.message);
  }
  throw err;
}
