import { notificationFrame } from "../../ahp/json-rpc.js";
import type { ActionEnvelope, Uri } from "../../ahp/types.js";
import type { Logger } from "../../lib/logger.js";
import type { Pace } from "../state/channels.js";
import { Outbox } from "./outbox.js";
import { WindowedDelivery } from "./windowed-delivery.js";

/** What a connection needs of its WebSocket. */
export interface SocketLike {
  /** Sends a text frame; `onWritten` is called once it has reached the socket. */
  send(frame: string, onWritten?: () => void): void;
  close(code: number, reason: string): void;
  /** Drops the connection without a closing handshake. */
  terminate(): void;
  readonly bufferedAmount: number;
  /** The peer's address, for the lines that log what it was refused. */
  readonly remoteAddress?: string;
}

/** How long a client closed for not reading gets to take the closing frame before the connection is dropped. */
const OVERFLOW_CLOSE_GRACE_MS = 1_000;
/** WebSocket close code for a peer that cannot keep up. */
const CLOSE_TRY_AGAIN_LATER = 1013;
/** Unsent bytes under which an ordinary subscriber has room for more output. */
const ROOM_BYTES = 1024 * 1024;

/**
 * The socket side of a connection: frames out through its outbox (output batched per channel's
 * `delivery.maxLatencyMs`) or its windowed subscriptions, delivery controls in, the highest
 * serverSeq sent, and closing. What only the session knows (how it shapes an envelope, a channel's
 * snapshot, who reads which channel, what a framed message does) it asks of the subclass.
 */
export abstract class ConnectionSocket {
  /** The highest serverSeq this connection sent its client (so a reconnect can tell what it may have seen). */
  highestSent = 0;
  protected closed = false;
  protected readonly outbox: Outbox;
  protected readonly windows: WindowedDelivery;
  /** Per channel, the longest this connection lets output wait to be batched (`subscribe`'s `delivery.maxLatencyMs`). */
  private readonly maxLatencyMs = new Map<Uri, number>();

  constructor(
    protected readonly socket: SocketLike,
    log: Logger,
  ) {
    this.outbox = new Outbox(
      socket,
      (buffered) => {
        log.warn({ clientId: this.clientId, buffered }, "client is not reading; disconnecting");
        this.close(CLOSE_TRY_AGAIN_LATER, "too much unread output; reconnect");
        // The closing frame waits behind everything unread; a client that reads nothing would never see it.
        setTimeout(() => socket.terminate(), OVERFLOW_CLOSE_GRACE_MS).unref();
      },
      () => {
        this.roomChanged();
        this.windows.drained();
      },
      (envelope) => this.frameFor(envelope, notificationFrame("action", envelope)),
    );
    this.windows = new WindowedDelivery({
      send: (frame) => this.sendFrame(frame),
      get bufferedAmount() {
        return socket.bufferedAmount;
      },
      snapshotMessage: (channel) => this.snapshotFrame(channel),
      room: (channel) => this.roomChanged(channel),
      ended: (channel) => this.windowEnded(channel),
      received: (message, done) => this.framedMessage(message, done),
      log,
    });
  }

  /** The client's id ("" before a handshake), for logs. */
  abstract readonly clientId: string;

  /** The peer's remote address (undefined once the socket forgot it). */
  get address(): string | undefined {
    return this.socket.remoteAddress;
  }

  deliver(envelope: ActionEnvelope, frame: string): void {
    if (this.closed) return;
    if (envelope.serverSeq > this.highestSent) this.highestSent = envelope.serverSeq;
    frame = this.frameFor(envelope, frame);
    if (this.windows.size !== 0 && this.windows.deliver(envelope.channel, frame)) return;
    if (envelope.action.type === "terminal/data") {
      this.outbox.sendData(envelope as ActionEnvelope & { action: { type: "terminal/data"; data: string } }, frame, this.maxLatencyMs.get(envelope.channel) ?? 0);
    } else {
      this.outbox.send(frame);
    }
  }

  sendEnvelope(envelope: ActionEnvelope): void {
    if (this.closed) return;
    this.told(envelope.serverSeq);
    const frame = notificationFrame("action", envelope);
    if (!this.windows.deliver(envelope.channel, frame)) this.outbox.send(frame);
  }

  /** Sends a frame (after any output held for batching); a client that stops reading is disconnected before it can pile up gateway memory. */
  sendFrame(frame: string): void {
    if (this.closed) return;
    this.outbox.send(frame);
  }

  paceFor(channel: Uri): Pace {
    return this.windows.pace(channel) ?? (this.outbox.buffered < ROOM_BYTES ? "ready" : "busy");
  }

  messageLimit(channel: Uri): number | undefined {
    return this.windows.size === 0 ? undefined : this.windows.messageLimit(channel);
  }

  released(channel: Uri): void {
    if (this.windows.has(channel)) this.windows.finish(channel);
  }

  told(serverSeq: number): void {
    if (serverSeq > this.highestSent) this.highestSent = serverSeq;
  }

  setDeliveryLatency(channel: Uri, maxLatencyMs: number | undefined): void {
    if (maxLatencyMs === undefined) this.maxLatencyMs.delete(channel);
    else this.maxLatencyMs.set(channel, maxLatencyMs);
  }

  hasWindow(channel: Uri): boolean {
    return this.windows.has(channel);
  }

  /** Closes the socket. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.socket.close(code, reason);
    this.closedByPeer();
  }

  /** Stops sending once the socket is gone, and lets the session forget the connection. */
  closedByPeer(): void {
    if (this.closed) return;
    this.closed = true;
    this.outbox.dispose();
    this.windows.dispose();
    this.forget();
  }

  /** The frame this connection sends for an envelope whose shared frame is `shared` (a connection may read some envelopes its own way). */
  protected abstract frameFor(envelope: ActionEnvelope, shared: string): string;
  /** The `channel/snapshot` frame of a channel as this connection sees it now, or undefined when it is gone. */
  protected abstract snapshotFrame(channel: Uri): string | undefined;
  /** This connection may have room for more output: on `channel`, or on every channel when undefined. */
  protected abstract roomChanged(channel?: Uri): void;
  /** A windowed subscription was reset (by either side): the connection no longer reads the channel. */
  protected abstract windowEnded(channel: Uri): void;
  /** A whole message the client framed, to handle in order like any other; `done` once it was applied. */
  protected abstract framedMessage(message: Record<string, unknown>, done: () => void): void;
  /** The socket is gone: the session lets go of what it held. */
  protected abstract forget(): void;
}
