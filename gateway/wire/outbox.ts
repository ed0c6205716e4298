import type { ActionEnvelope, Uri } from "../../ahp/types.js";
import { notificationFrame } from "../../ahp/json-rpc.js";

/** What an outbox writes to: `onWritten`, when given, is called once the frame has reached the socket. */
export interface FrameSink {
  send(frame: string, onWritten?: () => void): void;
  readonly bufferedAmount: number;
}

/**
 * Unsent bytes from which each write asks to hear when it reached the socket, so output waiting
 * for room (and windowed frames waiting for the socket) learn of it without a timer; below it
 * nothing waits for this connection.
 */
const WATCH_BYTES = 64 * 1024;

/** Unsent bytes above which output is batched instead of sent frame by frame. */
const CONGESTED_BYTES = 256 * 1024;
/** How long output waits to be batched while the socket is congested. */
const CONGESTED_BATCH_MS = 5;
/** Unsent bytes a client may hold for a while (a burst); staying above it for STALL_LIMIT_MS gets it closed. */
export const SOFT_LIMIT_BYTES = 8 * 1024 * 1024;
/** Unsent bytes no client may hold at all. */
const HARD_LIMIT_BYTES = 64 * 1024 * 1024;
/** How long a client may stay above the soft limit. */
const STALL_LIMIT_MS = 10_000;

/**
 * One connection's outgoing frames. `terminal/data` is sent at once while the socket keeps up, and
 * otherwise merged per channel (consecutive output envelopes concatenate safely: the reducer only
 * appends) and sent as one envelope, after the subscriber's `delivery.maxLatencyMs` when it asked
 * for one. Any other frame first flushes what is held, so order is kept. A client that stays above
 * its bound, or goes past the hard one, is reported to `onOverflow`. `onRoom` hears when unsent
 * bytes went down (held output sent or dropped, or a write that counted reached the socket).
 */
export class Outbox {
  private readonly held = new Map<Uri, { parts: string[]; last: ActionEnvelope }>();
  private heldChars = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;

  private readonly written = (): void => this.onRoom();

  constructor(
    private readonly sink: FrameSink,
    private readonly onOverflow: (buffered: number) => void,
    private readonly onRoom: () => void = () => {},
    /** How a merged output envelope is framed (a connection may add what it asked for, such as the envelope's offset). */
    private readonly frameOf: (envelope: ActionEnvelope) => string = (envelope) => notificationFrame("action", envelope),
  ) {}

  /** Bytes waiting to reach the client: held output and the socket's own buffer. */
  get buffered(): number {
    return this.sink.bufferedAmount + this.heldChars;
  }

  /** Sends a frame, after whatever output is held. */
  send(frame: string): void {
    this.flush();
    this.write(frame);
  }

  /** Sends a `terminal/data` envelope now, or holds it to merge with the next ones. */
  sendData(envelope: ActionEnvelope & { action: { type: "terminal/data"; data: string } }, frame: string, maxLatencyMs: number): void {
    if (maxLatencyMs <= 0 && this.held.size === 0 && this.sink.bufferedAmount < CONGESTED_BYTES) return this.write(frame);
    const entry = this.held.get(envelope.channel);
    if (entry) {
      entry.parts.push(envelope.action.data);
      entry.last = envelope;
    } else {
      this.held.set(envelope.channel, { parts: [envelope.action.data], last: envelope });
    }
    this.heldChars += envelope.action.data.length;
    this.flushTimer ??= setTimeout(() => this.flush(), Math.max(maxLatencyMs, CONGESTED_BATCH_MS));
    this.checkBounds();
  }

  /** Sends everything held, one merged envelope per channel. */
  flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.held.size === 0) return;
    const held = [...this.held.values()];
    this.held.clear();
    this.heldChars = 0;
    for (const { parts, last } of held) {
      // The spread keeps what the last envelope is marked with (its output offset): the merged one ends where it did.
      const merged: ActionEnvelope = { ...last, action: { type: "terminal/data", data: parts.join("") } };
      this.write(this.frameOf(merged));
    }
    this.onRoom();
  }

  /** Forgets the output held for `channel` (the connection may no longer read it): none of it is sent. */
  drop(channel: Uri): void {
    const entry = this.held.get(channel);
    if (!entry) return;
    this.held.delete(channel);
    for (const part of entry.parts) this.heldChars -= part.length;
    // Fewer unsent bytes: terminals paced on this connection may be read again.
    this.onRoom();
  }

  /** Stops the timers (the socket is gone). */
  dispose(): void {
    clearTimeout(this.flushTimer);
    clearTimeout(this.stallTimer);
    this.held.clear();
    this.heldChars = 0;
  }

  private write(frame: string): void {
    this.sink.send(frame, this.sink.bufferedAmount + frame.length >= WATCH_BYTES ? this.written : undefined);
    this.checkBounds();
  }

  private checkBounds(): void {
    const buffered = this.buffered;
    if (buffered > HARD_LIMIT_BYTES) return this.onOverflow(buffered);
    if (buffered <= SOFT_LIMIT_BYTES) {
      clearTimeout(this.stallTimer);
      this.stallTimer = undefined;
      return;
    }
    this.stallTimer ??= setTimeout(() => {
      this.stallTimer = undefined;
      if (this.buffered > SOFT_LIMIT_BYTES) this.onOverflow(this.buffered);
    }, STALL_LIMIT_MS);
  }
}
