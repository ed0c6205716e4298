import { DeliveryError, type ChannelReceiveLimits } from "./channel-delivery.js";

/**
 * The sender's side of one direction's window: bytes of messages started, the cumulative ends of
 * messages sent whole (the only positions credit may name), and what the receiver has released.
 * A message may start only while outstanding bytes are below the window; one started message may
 * overshoot it, never by more than `maximumMessageBytes`.
 */
export class SendWindow {
  private started = 0;
  private consumed = 0;
  private readonly ends: number[] = [];
  private head = 0;

  constructor(readonly limits: ChannelReceiveLimits) {}

  /** Bytes started and not yet released by the receiver. */
  get outstanding(): number {
    return this.started - this.consumed;
  }

  /** True while a new message may start. */
  get open(): boolean {
    return this.outstanding < this.limits.windowBytes;
  }

  /** True when a message of `bytes` is within the receiver's message limit. */
  fits(bytes: number): boolean {
    return bytes <= this.limits.maximumMessageBytes;
  }

  /** Counts a message of `bytes` as started. */
  start(bytes: number): void {
    this.started += bytes;
  }

  /** The message started last went out whole: its end becomes a position credit may name. */
  finish(): void {
    this.ends.push(this.started);
  }

  /**
   * Takes the receiver's cumulative release. Older or repeated positions change nothing; a
   * position past what was sent whole, or inside a message, is a protocol error.
   */
  credit(consumedBytes: number): void {
    if (consumedBytes <= this.consumed) return;
    let at = this.head;
    while (at < this.ends.length && this.ends[at]! < consumedBytes) at++;
    if (at >= this.ends.length) throw new DeliveryError(`credit ${consumedBytes} is beyond the ${this.ends.at(-1) ?? this.consumed} bytes sent whole`);
    if (this.ends[at] !== consumedBytes) throw new DeliveryError(`credit ${consumedBytes} falls inside a message`);
    this.consumed = consumedBytes;
    this.head = at + 1;
    if (this.head > 1024) {
      this.ends.splice(0, this.head);
      this.head = 0;
    }
  }
}
