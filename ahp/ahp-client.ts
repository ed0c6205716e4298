import { DeliveryError, parseFlowControl, parseResumedChannels, type ChannelFlowControl, type ChannelReceiveLimits } from "./channel-delivery.js";
import { ClientWindows, type CreditMode, type WindowStats } from "./client-windows.js";
import { messageFrom, notificationFrame, requestFrame, type JsonRpcMessage } from "./json-rpc.js";
import { ROOT_URI, type ActionEnvelope } from "./types.js";

/** What `initialize` asks for. */
export interface InitializeParams {
  clientId: string;
  protocolVersions: readonly string[];
  clientInfo?: { name: string; version?: string };
  initialSubscriptions?: readonly string[];
  /** Extensions the host may read (`{ screen: true }` asks for terminal screens, docs/ahp.md). */
  _meta?: Record<string, unknown>;
}

/** What the client core needs of a transport: a way to send one text frame. */
export interface FrameSender {
  send(text: string): void;
}

/** What a client is told: `action` envelopes, any other notification by method (`framed` when it came in `channel/frame` fragments), and windows it had to reset. */
export interface ClientHandlers {
  action?(envelope: ActionEnvelope, framed: boolean): void;
  notification?(method: string, params: unknown, framed: boolean): void;
  /** The host broke a windowed-delivery rule on `channel`; the client reset it. */
  deliveryError?(channel: string, reason: string): void;
}

/** How `subscribe` is asked: ordinary delivery, or windowed with the client's receive limits (1.1). */
export interface SubscribeOptions {
  flowControl?: { receive: ChannelReceiveLimits };
  delivery?: { maxLatencyMs?: number };
  /** When a windowed channel's credit goes back (default: once each message was handed to the handlers). */
  credit?: CreditMode;
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
  /** Replies that open windows as they are read, before any frame that follows them. */
  private readonly opening = new Map<number, { credit: CreditMode; channel?: string }>();
  private readonly windows: ClientWindows;

  constructor(
    private readonly transport: FrameSender,
    private readonly handlers: ClientHandlers = {},
  ) {
    this.windows = new ClientWindows({
      sendText: (text) => this.transport.send(text),
      deliver: (message) => this.deliverNotification(message.method as string, message.params, true),
      failed: (channel, reason) => this.handlers.deliveryError?.(channel, reason),
    });
  }

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
      this.transport.send(requestFrame(id, method, params));
    });
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.transport.send(notificationFrame(method, params));
  }

  /**
   * Dispatches an action to a channel and returns the `clientSeq` it carries; `framed` sends it in
   * `channel/frame` fragments within the host's receive limits (a windowed channel only).
   */
  dispatch(channel: string, action: Record<string, unknown>, options: { framed?: boolean; clientSeq?: number } = {}): number {
    const clientSeq = options.clientSeq ?? this.nextClientSeq++;
    const params = { channel, clientSeq, action };
    if (options.framed) this.windows.sendFramed(channel, notificationFrame("dispatchAction", params));
    else this.notify("dispatchAction", params);
    return clientSeq;
  }

  /**
   * `subscribe`; with `flowControl`, a host that accepts answers with limits instead of a snapshot,
   * and the window is installed while its reply is read, so the frames after it find it.
   */
  subscribe<T = any>(channel: string, options: SubscribeOptions = {}): Promise<T> {
    const { credit = "auto", ...params } = options;
    this.opening.set(this.nextId, { credit, channel });
    return this.call<T>("subscribe", { channel, ...params });
  }

  /** `reconnect`; the windows it resumes are installed (counters at zero) while its reply is read. */
  reconnect<T = any>(params: Record<string, unknown>, credit: CreditMode = "auto"): Promise<T> {
    this.opening.set(this.nextId, { credit });
    this.windows.closeAll();
    return this.call<T>("reconnect", { channel: ROOT_URI, ...params });
  }

  /** Installs a window a host accepted by other means than `subscribe`/`reconnect` here (counters at zero). */
  openWindow(channel: string, flowControl: ChannelFlowControl, credit: CreditMode = "auto"): void {
    this.windows.open(channel, flowControl, credit);
  }

  /** Releases up to `count` applied messages of a manual-credit window; the credit sent, or undefined. */
  release(channel: string, count?: number): number | undefined {
    return this.windows.release(channel, count);
  }

  /** A window's figures (outstanding bytes and their peak, messages), or undefined for an ordinary channel. */
  windowStats(channel: string): WindowStats | undefined {
    return this.windows.stats(channel);
  }

  /** Ends a subscription (and its window). */
  unsubscribe(channel: string): void {
    this.windows.close(channel);
    this.notify("unsubscribe", { channel });
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
    this.receiveParsed(frame, text.length);
  }

  /** The same, for a frame its owner has already parsed (`textLength`: the frame's length, to check windowed frame limits). */
  receiveParsed(value: unknown, textLength?: number): void {
    const message = messageFrom(value);
    if (message.kind === "result" || message.kind === "error") return this.settle(message);
    // A host sends a client no requests; what is not a notification is not read.
    if (message.kind !== "notification") return;
    const { method, params } = message;
    try {
      if (method === "channel/frame") return this.windows.frame(params, textLength);
      if (method === "channel/credit") return this.windows.credit(params);
      if (method === "channel/reset") this.windows.close((params as { channel?: string } | undefined)?.channel ?? "");
    } catch (err) {
      if (!(err instanceof DeliveryError)) throw err;
      this.handlers.deliveryError?.((params as { channel?: string } | undefined)?.channel ?? "", err.message);
      return;
    }
    this.deliverNotification(method, params, false);
  }

  /** The socket is gone: every request still waiting fails with `reason`, and windows are forgotten (a reconnect starts them afresh). */
  disconnected(reason: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(reason);
    this.pending.clear();
    this.opening.clear();
    this.windows.closeAll();
  }

  /** A reply settles the request it answers (an error reply rejects it); one that answers nothing waiting is dropped. */
  private settle(reply: Extract<JsonRpcMessage, { kind: "result" | "error" }>): void {
    const id = reply.id;
    const waiter = typeof id === "number" ? this.pending.get(id) : undefined;
    if (!waiter) return;
    this.pending.delete(id as number);
    const opening = this.opening.get(id as number);
    this.opening.delete(id as number);
    if (reply.kind === "error") return waiter.reject(reply.error);
    if (opening) this.openWindows(reply.result, opening);
    waiter.resolve(reply.result ?? null);
  }

  private openWindows(result: unknown, { credit, channel }: { credit: CreditMode; channel?: string }): void {
    const value = (result ?? {}) as { flowControl?: unknown; windows?: unknown };
    if (channel !== undefined) {
      this.windows.close(channel);
      if (value.flowControl !== undefined) this.windows.open(channel, parseFlowControl(value.flowControl), credit);
      return;
    }
    if (value.windows === undefined) return;
    for (const resumed of parseResumedChannels(value.windows)) this.windows.open(resumed.channel, resumed.flowControl, credit);
  }

  private deliverNotification(method: string, params: unknown, framed: boolean): void {
    if (method === "action") {
      const envelope = params as ActionEnvelope;
      this.sawServerSeq(envelope.serverSeq);
      this.handlers.action?.(envelope, framed);
      return;
    }
    if (method === "channel/snapshot") this.sawServerSeq((params as { snapshot?: { fromSeq?: number } }).snapshot?.fromSeq ?? 0);
    this.handlers.notification?.(method, params, framed);
  }
}
