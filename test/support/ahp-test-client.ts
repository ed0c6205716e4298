import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { AhpClient } from "../../ahp/ahp-client.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";

export { contentText } from "../../ahp/content-text.js";

/** Characters of each channel's latest output kept for matching. */
const TAIL_CHARS = 64 * 1024;

/** A JSON-RPC error as the gateway sent it. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** An error response, thrown by `call`. */
export class RpcFailure extends Error {
  constructor(readonly error: RpcError) {
    super(`${error.code}: ${error.message}`);
  }
}

/** An `action` notification's params. */
export interface Envelope {
  channel: string;
  action: { type: string; [key: string]: unknown };
  serverSeq: number;
  origin?: { clientId: string; clientSeq: number };
  rejectionReason?: string;
}

/**
 * A scripted AHP client for tests: raw frames in and out, requests with ids, and every inbound
 * frame kept so tests can wait for notifications or inspect all of them.
 */
export class AhpTestClient {
  readonly frames: unknown[] = [];
  private readonly outputs = new Map<string, { chunks: string[]; tail: string }>();
  private readonly client: AhpClient;
  private readonly waiters = new Set<(frame: unknown) => void>();
  closeCode: number | undefined;

  private constructor(readonly socket: WebSocket) {
    this.client = new AhpClient({ send: (text) => socket.send(text) });
    socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8"));
      this.frames.push(frame);
      this.client.receiveParsed(frame);
      if (frame.method === "action" && frame.params.action.type === "terminal/data") {
        const output = this.outputs.get(frame.params.channel) ?? { chunks: [], tail: "" };
        output.chunks.push(frame.params.action.data);
        output.tail = (output.tail + frame.params.action.data).slice(-TAIL_CHARS);
        this.outputs.set(frame.params.channel, output);
      }
      for (const wake of [...this.waiters]) wake(frame);
    });
    socket.on("close", (code) => {
      this.closeCode = code;
      this.client.disconnected(new Error(`socket closed (${code})`));
    });
  }

  /** Opens a WebSocket to `url` (trusting the CA file `ca` for wss); rejects with the HTTP status when the upgrade is refused. */
  static connect(url: string, headers: Record<string, string> = {}, ca?: string): Promise<AhpTestClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers, ...(ca === undefined ? {} : { ca: readFileSync(ca) }) });
      socket.once("open", () => resolve(new AhpTestClient(socket)));
      socket.once("unexpected-response", (_, response) => reject(new Error(`HTTP ${response.statusCode}`)));
      socket.once("error", reject);
    });
  }

  /** Connects and runs `initialize` with the given versions (0.6.0 by default). */
  static async initialized(url: string, options: { clientId?: string; versions?: string[]; subscribe?: string[]; ca?: string } = {}): Promise<AhpTestClient> {
    const client = await AhpTestClient.connect(url, {}, options.ca);
    await client.call("initialize", {
      channel: "ahp-root://",
      protocolVersions: options.versions ?? ["0.6.0"],
      clientId: options.clientId ?? `client-${Math.random().toString(36).slice(2)}`,
      initialSubscriptions: options.subscribe ?? [],
    });
    return client;
  }

  /** Sends a raw frame. */
  sendRaw(text: string | Buffer): void {
    this.socket.send(text);
  }

  /** Sends a request and resolves with its result, or throws RpcFailure with its error. */
  call<T = any>(method: string, params?: unknown): Promise<T> {
    return this.client.call<T>(method, params).catch((err: unknown) => {
      if (!(err instanceof JsonRpcError)) throw err;
      throw new RpcFailure(err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data });
    });
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.client.notify(method, params);
  }

  /** Dispatches an action and returns the clientSeq it used. */
  dispatch(channel: string, action: Record<string, unknown>): number {
    return this.client.dispatch(channel, action);
  }

  /** Every `action` envelope received so far. */
  envelopes(): Envelope[] {
    return this.frames.filter((frame) => (frame as { method?: string }).method === "action").map((frame) => (frame as { params: Envelope }).params);
  }

  /** Resolves with the first received frame matching `predicate` (already received ones count; each frame is checked once). */
  waitFor(predicate: (frame: unknown) => boolean, timeoutMs = 10_000): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const found = this.frames.find(predicate);
      if (found !== undefined) return resolve(found);
      const timer = setTimeout(() => (finish(), reject(new Error(`no matching frame within ${timeoutMs} ms; last: ${JSON.stringify(this.frames.slice(-3)).slice(0, 600)}`))), timeoutMs);
      const wake = (frame: unknown): void => {
        if (!predicate(frame)) return;
        finish();
        resolve(frame);
      };
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
      };
      this.waiters.add(wake);
    });
  }

  /** Resolves with the first envelope matching `predicate`. */
  async waitForEnvelope(predicate: (envelope: Envelope) => boolean, timeoutMs?: number): Promise<Envelope> {
    const frame = await this.waitFor((f) => (f as { method?: string }).method === "action" && predicate((f as { params: Envelope }).params), timeoutMs);
    return (frame as { params: Envelope }).params;
  }

  /** The terminal output received on a channel so far, joined. */
  outputOf(channel: string): string {
    const output = this.outputs.get(channel);
    if (!output) return "";
    if (output.chunks.length > 1) output.chunks = [output.chunks.join("")];
    return output.chunks[0]!;
  }

  /** Waits until the last `window` characters (at most 64 Ki) of the output on `channel` match `pattern`. */
  async waitForOutput(channel: string, pattern: RegExp, timeoutMs = 10_000, window = TAIL_CHARS): Promise<string> {
    const matches = (): boolean => pattern.test((this.outputs.get(channel)?.tail ?? "").slice(-window));
    if (!matches()) await this.waitForEnvelope((envelope) => envelope.channel === channel && envelope.action.type === "terminal/data" && matches(), timeoutMs);
    return this.outputOf(channel);
  }

  /** Resolves with the close code once the socket has closed. */
  closed(timeoutMs = 10_000): Promise<number> {
    if (this.closeCode !== undefined) return Promise.resolve(this.closeCode);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("socket did not close")), timeoutMs);
      this.socket.once("close", (code) => (clearTimeout(timer), resolve(code)));
    });
  }

  /** Closes the socket. */
  close(): void {
    this.socket.close();
  }
}

/** The error response a call got; throws when it succeeded. */
export async function rpcErrorOf(promise: Promise<unknown>): Promise<RpcError> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (outcome instanceof RpcFailure) return outcome.error;
  throw new Error(`expected an error response, got ${outcome === undefined ? "a result" : String(outcome)}`);
}
