import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { AhpClient } from "../../ahp/ahp-client.js";
import type { ChannelReceiveLimits } from "../../ahp/channel-delivery.js";
import type { CreditMode, WindowStats } from "../../ahp/client-windows.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";

import { contentText } from "../../ahp/content-text.js";
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
 * frame kept so tests can wait for notifications or inspect all of them. On windowed channels the
 * `channel/frame` fragments are kept as they came and, once reassembled, the messages they carried
 * too (marked in `framed`), so envelopes and output read the same either way.
 */
export class AhpTestClient {
  readonly frames: unknown[] = [];
  /** Messages that arrived in `channel/frame` fragments (also in `frames`, after their last fragment). */
  readonly framed = new WeakSet<object>();
  /** Windowed-delivery rules the gateway broke (the client reset those channels). */
  readonly deliveryErrors: string[] = [];
  private readonly outputs = new Map<string, { chunks: string[]; tail: string }>();
  private readonly client: AhpClient;
  private readonly waiters = new Set<(frame: unknown) => void>();
  closeCode: number | undefined;

  private constructor(readonly socket: WebSocket) {
    const inner = (frame: { method: string; params: unknown }): void => {
      this.framed.add(frame);
      this.take(frame);
    };
    this.client = new AhpClient(
      { send: (text) => socket.send(text) },
      {
        action: (params, framed) => framed && inner({ method: "action", params }),
        notification: (method, params, framed) => framed && inner({ method, params }),
        deliveryError: (channel, reason) => this.deliveryErrors.push(`${channel}: ${reason}`),
      },
    );
    socket.on("message", (data: Buffer) => {
      const text = data.toString("utf8");
      const frame = JSON.parse(text);
      this.take(frame, () => this.client.receiveParsed(frame, text.length));
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

  /** Records a frame (then lets `handle` read it) and wakes whoever waits for one like it. */
  private take(frame: any, handle?: () => void): void {
    this.frames.push(frame);
    handle?.();
    // A terminal's snapshot holds its output so far: what a client shows before the output after it.
    const snapshots = frame.result?.snapshot ? [frame.result.snapshot] : frame.result?.type !== "replay" && Array.isArray(frame.result?.snapshots) ? frame.result.snapshots : [];
    for (const snapshot of snapshots) {
      if (!Array.isArray(snapshot?.state?.content)) continue;
      const output = this.outputs.get(snapshot.resource) ?? { chunks: [], tail: "" };
      output.tail = contentText(snapshot.state).slice(-TAIL_CHARS);
      this.outputs.set(snapshot.resource, output);
    }
    if (frame.method === "action" && frame.params.action.type === "terminal/data") {
      const output = this.outputs.get(frame.params.channel) ?? { chunks: [], tail: "" };
      output.chunks.push(frame.params.action.data);
      output.tail = (output.tail + frame.params.action.data).slice(-TAIL_CHARS);
      this.outputs.set(frame.params.channel, output);
    }
    for (const wake of [...this.waiters]) wake(frame);
  }

  /** Sends a raw frame. */
  sendRaw(text: string | Buffer): void {
    this.socket.send(text);
  }

  /** The highest serverSeq seen on this socket (and any recorded with `sawServerSeq`). */
  get lastSeenServerSeq(): number {
    return this.client.lastSeenServerSeq;
  }

  /** Carries a serverSeq seen elsewhere (an earlier socket) over, as clients keep the highest across sockets. */
  sawServerSeq(serverSeq: number): void {
    this.client.sawServerSeq(serverSeq);
  }

  /** `subscribe` offering a window (1.1); the result carries `flowControl` when the gateway accepted it. */
  subscribeWindowed<T = any>(channel: string, receive: ChannelReceiveLimits, credit: CreditMode = "auto"): Promise<T> {
    return this.failures(this.client.subscribe<T>(channel, { flowControl: { receive }, credit }));
  }

  /** `reconnect`, installing the windows its reply resumes. */
  reconnect<T = any>(params: Record<string, unknown>, credit: CreditMode = "auto"): Promise<T> {
    return this.failures(this.client.reconnect<T>(params, credit));
  }

  /** Releases applied messages of a manual-credit window; the credit sent, or undefined when none was due. */
  release(channel: string, count?: number): number | undefined {
    return this.client.release(channel, count);
  }

  /** A window's figures, or undefined for an ordinary channel. */
  windowStats(channel: string): WindowStats | undefined {
    return this.client.windowStats(channel);
  }

  private failures<T>(promise: Promise<T>): Promise<T> {
    return promise.catch((err: unknown) => {
      if (!(err instanceof JsonRpcError)) throw err;
      throw new RpcFailure(err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data });
    });
  }

  /** Sends a request and resolves with its result, or throws RpcFailure with its error. */
  call<T = any>(method: string, params?: unknown): Promise<T> {
    return this.failures(this.client.call<T>(method, params));
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.client.notify(method, params);
  }

  /** Dispatches an action (framed on a windowed channel when asked; with a given clientSeq to retry one) and returns the clientSeq it used. */
  dispatch(channel: string, action: Record<string, unknown>, options?: { framed?: boolean; clientSeq?: number }): number {
    return this.client.dispatch(channel, action, options);
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
    if (!output || output.chunks.length === 0) return "";
    if (output.chunks.length > 1) output.chunks = [output.chunks.join("")];
    return output.chunks[0]!;
  }

  /** Waits until the last `window` characters (at most 64 Ki) of the output on `channel` (its last snapshot's content, then the output after it) match `pattern`. */
  async waitForOutput(channel: string, pattern: RegExp, timeoutMs = 10_000, window = TAIL_CHARS): Promise<string> {
    const matches = (): boolean => pattern.test((this.outputs.get(channel)?.tail ?? "").slice(-window));
    if (!matches()) await this.waitForEnvelope((envelope) => envelope.channel === channel && envelope.action.type === "terminal/data" && matches(), timeoutMs);
    return this.outputOf(channel);
  }

  /** Subscribes to a terminal and waits until its output, the snapshot's content first, matches `pattern` (output that came before the subscription is only in the snapshot). */
  async subscribeUntil(channel: string, pattern: RegExp, timeoutMs = 10_000): Promise<void> {
    const { snapshot } = await this.call("subscribe", { channel });
    if (!pattern.test(contentText(snapshot.state).slice(-TAIL_CHARS))) await this.waitForOutput(channel, pattern, timeoutMs);
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
