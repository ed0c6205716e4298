import WebSocket from "ws";
import { AhpClient } from "../ahp/ahp-client.js";
import { ErrorCode } from "../ahp/error-codes.js";
import { JsonRpcError } from "../ahp/json-rpc-error.js";
import type { ActionEnvelope } from "../ahp/types.js";

/** A failure the CLI reports in one line and exits 1 for. */
export class CliError extends Error {}

/** Where the gateway is and how to get in. */
export interface Target {
  /** The WebSocket URL, with the connection token in `?tkn=`. */
  url: string;
  /** A user's secret, when the gateway has a users file. */
  userToken?: string;
}

/** Schemes of a gateway's address: its WebSocket one, or the console's http(s) one on the same port. */
const SCHEMES: Record<string, string> = { "ws:": "ws:", "wss:": "wss:", "http:": "ws:", "https:": "wss:" };

/**
 * The gateway URL from flags or environment, with the connection token folded in as `?tkn=`. The
 * console's `http(s)://` address serves as its `ws(s)://` one; any other scheme, or no token at all,
 * is a CliError saying what to pass.
 */
export function targetFrom(flags: { url?: string; token?: string; "user-token"?: string }, env: NodeJS.ProcessEnv): Target {
  const raw = flags.url ?? env.AHP_URL;
  if (!raw) throw new CliError("no gateway: pass --url ws://HOST:PORT/?tkn=TOKEN or set AHP_URL");
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `ws://${raw}`);
  } catch {
    throw new CliError(`not a gateway URL: ${raw}`);
  }
  const scheme = SCHEMES[url.protocol];
  if (!scheme) throw new CliError(`the gateway's URL starts with ws:// (wss:// with TLS), as npm start prints it; got ${url.protocol}// in ${raw}`);
  url.protocol = scheme;
  const token = flags.token ?? env.AHP_TOKEN;
  if (token) url.searchParams.set("tkn", token);
  if (!url.searchParams.get("tkn")) {
    throw new CliError("no connection token: use the URL npm start prints (it ends in ?tkn=TOKEN), or pass --token TOKEN or set AHP_TOKEN");
  }
  const userToken = flags["user-token"] ?? env.AHP_USER_TOKEN;
  return userToken ? { url: url.toString(), userToken } : { url: url.toString() };
}

/** The versions ahp-term speaks, newest first. */
const PROTOCOL_VERSIONS = ["1.1.0", "1.0.0", "0.9.0", "0.8.0", "0.7.0"];

/** An initialized AHP connection for the CLI: requests, dispatches, and the actions it receives. */
export class AhpConnection {
  private readonly client: AhpClient;
  onAction: (envelope: ActionEnvelope) => void = () => {};
  onClose: (code: number) => void = () => {};

  private constructor(private readonly socket: WebSocket) {
    this.client = new AhpClient({ send: (text) => socket.send(text) }, { action: (envelope) => this.onAction(envelope) });
    socket.on("message", (data: Buffer) => this.client.receive(data.toString("utf8")));
    socket.on("close", (code) => {
      this.client.disconnected(new CliError(`the gateway closed the connection (${code})`));
      this.onClose(code);
    });
  }

  /**
   * Connects, initializes (asking for output offsets with `offsets`, docs/ahp.md), and signs in when a
   * user token is given; every refusal becomes a readable CliError.
   */
  static async connect(target: Target, options: { offsets?: boolean } = {}): Promise<AhpConnection> {
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
    await connection.client.initialize({
      protocolVersions: PROTOCOL_VERSIONS,
      clientId: `ahp-term-${process.pid}-${Date.now()}`,
      clientInfo: { name: "ahp-term" },
      ...(options.offsets ? { _meta: { offsets: true } } : {}),
    });
    if (target.userToken) {
      await connection.client.authenticate("ahp-terminal-gateway", target.userToken).catch((err: unknown) => {
        throw new CliError(err instanceof JsonRpcError && err.code === ErrorCode.AuthRequired ? "the gateway refused the user token" : String(err));
      });
    }
    return connection;
  }

  /** A request's result; JsonRpcError when the gateway refuses it. */
  call<T = any>(method: string, params: unknown): Promise<T> {
    return this.client.call<T>(method, params);
  }

  /** Stops the channel's envelopes to this connection. */
  unsubscribe(channel: string): void {
    this.client.unsubscribe(channel);
  }

  /** Dispatches an action to a channel. */
  dispatch(channel: string, action: Record<string, unknown>): void {
    this.client.dispatch(channel, action);
  }

  /** Closes the socket. */
  close(): void {
    this.socket.close();
  }
}

/** A friendlier message for the refusals every command can meet. */
export function explain(err: unknown, uri?: string): never {
  if (err instanceof JsonRpcError) {
    if (err.code === ErrorCode.NotFound) throw new CliError(`no terminal at ${uri ?? "that URI"}`);
    if (err.code === ErrorCode.AuthRequired) throw new CliError("the gateway wants a sign-in: pass --user-token or set AHP_USER_TOKEN");
    if (err.code === ErrorCode.PermissionDenied) throw new CliError(`not allowed: ${err.message}`);
    throw new CliError(err.message);
  }
  throw err;
}
