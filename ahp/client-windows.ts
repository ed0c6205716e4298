import { DeliveryError, parseCreditParams, parseFrameParams, parseFramedMessage, utf16Bytes, type ChannelFlowControl } from "./channel-delivery.js";
import { FrameAssembler } from "./frame-assembler.js";
import { FrameCursor } from "./frame-cursor.js";
import { notificationFrame } from "./json-rpc.js";
import { SendWindow } from "./send-window.js";
import type { Uri } from "./types.js";

/** When a windowed channel's credit goes back: once each message has been handed to the handlers, or when the owner says so. */
export type CreditMode = "auto" | "manual";

/** What the owner can read of one window. */
export interface WindowStats {
  flowControl: ChannelFlowControl;
  /** Bytes the host has outstanding towards this client now, and the most it ever had. */
  outstanding: number;
  maxOutstanding: number;
  /** Whole messages received, and those not yet released (manual credit). */
  messages: number;
  unreleased: number;
  /** Bytes of this client's own framed messages the host has not released. */
  sentOutstanding: number;
}

interface ClientWindow {
  flowControl: ChannelFlowControl;
  inbound: FrameAssembler;
  outbound: SendWindow;
  queue: string[];
  credit: CreditMode;
  maxOutstanding: number;
  messages: number;
}

/** What the windows need of their client: raw frames out, messages in, and where a broken rule is reported. */
export interface WindowTransport {
  sendText(text: string): void;
  deliver(message: Record<string, unknown>): void;
  failed(channel: Uri, reason: string): void;
}

/**
 * A client's windowed channels (protocol 1.1): reassembles the host's `channel/frame` fragments
 * into messages, checks them against the limits it offered, returns credit after each message was
 * applied (or when the owner releases it), resets a channel whose sender broke a rule, and frames
 * the client's own messages within the host's receive limits.
 */
export class ClientWindows {
  private readonly windows = new Map<Uri, ClientWindow>();

  constructor(private readonly transport: WindowTransport) {}

  /** True for a channel with an accepted window. */
  has(channel: Uri): boolean {
    return this.windows.has(channel);
  }

  /** Installs a window the host accepted (every counter starts at zero). */
  open(channel: Uri, flowControl: ChannelFlowControl, credit: CreditMode): void {
    this.windows.set(channel, {
      flowControl,
      inbound: new FrameAssembler(flowControl.clientReceive),
      outbound: new SendWindow(flowControl.hostReceive),
      queue: [],
      credit,
      maxOutstanding: 0,
      messages: 0,
    });
  }

  /** Forgets a window (unsubscribed, reset, or the socket is gone). */
  close(channel: Uri): void {
    this.windows.delete(channel);
  }

  /** Forgets every window. */
  closeAll(): void {
    this.windows.clear();
  }

  /** The window's figures, or undefined. */
  stats(channel: Uri): WindowStats | undefined {
    const window = this.windows.get(channel);
    if (!window) return undefined;
    const { flowControl, inbound, outbound, maxOutstanding, messages } = window;
    return { flowControl, outstanding: inbound.outstanding, maxOutstanding, messages, unreleased: inbound.unreleasedCount, sentOutstanding: outbound.outstanding };
  }

  /** An inbound `channel/frame` (`frameChars`: its whole text's length, when known). */
  frame(params: unknown, frameChars?: number): void {
    const { channel, data, final } = parseFrameParams(params);
    const window = this.windows.get(channel);
    if (!window) return;
    this.guard(channel, () => {
      const text = window.inbound.push(data, final, frameChars);
      window.maxOutstanding = Math.max(window.maxOutstanding, window.inbound.outstanding);
      if (text === undefined) return;
      const message = parseFramedMessage(text, channel);
      window.messages++;
      this.transport.deliver(message);
      if (window.credit === "auto" && this.windows.get(channel) === window) this.sendCredit(channel, window.inbound.release());
    });
  }

  /** Releases up to `count` applied messages of a manual-credit window and returns the credit sent (undefined when none). */
  release(channel: Uri, count = Infinity): number | undefined {
    const window = this.windows.get(channel);
    if (!window || window.inbound.unreleasedCount === 0) return undefined;
    let consumed = window.inbound.consumedBytes;
    for (let i = 0; i < count && window.inbound.unreleasedCount > 0; i++) consumed = window.inbound.release();
    this.sendCredit(channel, consumed);
    return consumed;
  }

  /** The host released some of this client's framed messages. */
  credit(params: unknown): void {
    const { channel, consumedBytes } = parseCreditParams(params);
    const window = this.windows.get(channel);
    if (!window) return;
    this.guard(channel, () => {
      window.outbound.credit(consumedBytes);
      this.pump(channel, window);
    });
  }

  /** Sends a logical message (a JSON-RPC notification's text) framed, in order, as the host's window allows. */
  sendFramed(channel: Uri, text: string): void {
    const window = this.windows.get(channel);
    if (!window) throw new DeliveryError(`${channel} has no window to frame into`);
    if (!window.outbound.fits(utf16Bytes(text))) throw new DeliveryError(`a message of ${utf16Bytes(text)} bytes exceeds the host's maximumMessageBytes`);
    window.queue.push(text);
    this.pump(channel, window);
  }

  private pump(channel: Uri, window: ClientWindow): void {
    while (window.queue.length > 0 && window.outbound.open) {
      const text = window.queue.shift()!;
      window.outbound.start(utf16Bytes(text));
      const cursor = new FrameCursor(channel, text, window.flowControl.hostReceive.maximumFrameBytes);
      while (!cursor.done) this.transport.sendText(cursor.next());
      window.outbound.finish();
    }
  }

  private sendCredit(channel: Uri, consumedBytes: number): void {
    this.transport.sendText(notificationFrame("channel/credit", { channel, consumedBytes }));
  }

  private guard(channel: Uri, step: () => void): void {
    try {
      step();
    } catch (err) {
      if (!(err instanceof DeliveryError)) throw err;
      this.windows.delete(channel);
      this.transport.sendText(notificationFrame("channel/reset", { channel }));
      this.transport.failed(channel, err.message);
    }
  }
}
