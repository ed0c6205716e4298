import { JsonRpcError } from "./json-rpc-error.js";
import { ROOT_URI, type ActionEnvelope } from "./types.js";

/** What `initialize` asks for. */
export interface InitializeParams {
  clientId: string;
  protocolVersions: readonly string[];
  clientInfo?: { name: string; version?: string };
  initialSubscriptions?: readonly string[];
}

/** What the client core needs of a transport: a way to send one text frame. */
export interface FrameSender {
  send(text: string): void;
}

/** What a client is told: `action` envelopes, and any other notification by method. */
export interface ClientHandlers {
  action?(envelope: ActionEnvelope): void;
  notification?(method: string, params: unknown): void;
}

interface Waiter {
  resolve(result: unknown): void;
  reject(err: Error): void;
}

/**
 * The protocol side of an AHP client, for any transport (a browser WebSocket, ws, a test's socket):
 * requests with ids and their replies (an error reply rejects with a JsonRpcError), notifications,
 * `dispatchAction` with increasing `clientSeq`, and the highest `serverSeq` seen, which `reconnect`
 * needs. The owner feeds it every inbound text frame and tells it when the socket is gone.
 */
export class AhpClient {
  private nextId = 1;
  private nextClientSeq = 1;
  private seen = 0;
  private readonly pending = new Map<number, Waiter>();

  constructor(
    private readonly transport: FrameSender,
    private readonly handlers: ClientHandlers = {},
  ) {}

  /** The highest `serverSeq` this client has seen (from `initialize`, snapshots' replies and envelopes); kept across sockets. */
  get lastSeenServerSeq(): number {
    return this.seen;
  }

  /** Records a `serverSeq` seen elsewhere (a reconnect's replay, a result): the highest one counts. */
  sawServerSeq(serverSeq: number): void {
    if (Number.isSafeInteger(serverSeq) && serverSeq > this.seen) this.seen = serverSeq;
  }

  /** Sends a request and resolves with its result; rejects with a JsonRpcError when the host refuses it. */
  call<T = any>(method: string, params?: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
      this.transport.send(JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }));
    });
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.transport.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  /** Dispatches an action to a channel and returns the `clientSeq` it carries. */
  dispatch(channel: string, action: Record<string, unknown>): number {
    const clientSeq = this.nextClientSeq++;
    this.notify("dispatchAction", { channel, clientSeq, action });
    return clientSeq;
  }

  /** `initialize` on the root channel; remembers the host's `serverSeq`. */
  async initialize<T extends { serverSeq: number } = any>(params: InitializeParams): Promise<T> {
    const result = await this.call<T>("initialize", { channel: ROOT_URI, ...params });
    this.sawServerSeq(result.serverSeq);
    return result;
  }

  /** `authenticate` against a resource the host advertised; an empty token signs out. */
  authenticate(resource: string, token: string): Promise<unknown> {
    return this.call("authenticate", { channel: ROOT_URI, resource, token });
  }

  /** Hands the client one inbound text frame: a reply settles its request, a notification goes to the handlers. */
  receive(text: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    this.receiveParsed(frame);
  }

  /** The same, for a frame its owner has already parsed. */
  receiveParsed(value: unknown): void {
    if (typeof value !== "object" || value === null) return;
    const frame = value as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };
    if (frame.id !== undefined && frame.method === undefined) {
      const waiter = typeof frame.id === "number" ? this.pending.get(frame.id) : undefined;
      if (!waiter) return;
      this.pending.delete(frame.id as number);
      if (frame.error) waiter.reject(new JsonRpcError(frame.error.code, frame.error.message, frame.error.data));
      else waiter.resolve(frame.result ?? null);
      return;
    }
    if (typeof frame.method !== "string") return;
    if (frame.method === "action") {
      const envelope = frame.params as ActionEnvelope;
      this.sawServerSeq(envelope.serverSeq);
      this.handlers.action?.(envelope);
      return;
    }
    this.handlers.notification?.(frame.method, frame.params);
  }

  /** The socket is gone: every request still waiting fails with `reason`. */
  disconnected(reason: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(reason);
    this.pending.clear();
  }
}
