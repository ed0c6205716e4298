import { DeliveryError, utf16Bytes, type ChannelReceiveLimits } from "./channel-delivery.js";

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * The receiver's side of one direction's window: joins `channel/frame` fragments into logical
 * messages and holds the sender to the limits it was given (frame size after escaping, message
 * size, starting a message only with credit left, no split surrogate pair). `release` is called
 * once the consumer has applied a message; its result is the cumulative count to credit.
 */
export class FrameAssembler {
  private parts: string[] = [];
  private partChars = 0;
  private received = 0;
  private released = 0;
  private unreleased: number[] = [];
  private head = 0;

  constructor(readonly limits: ChannelReceiveLimits) {}

  /** Characters of the message being assembled. */
  get pendingChars(): number {
    return this.partChars;
  }

  /** Bytes received (whole messages and the one being assembled) not yet released: what the sender has outstanding. */
  get outstanding(): number {
    return this.received + this.partChars * 2 - this.released;
  }

  /** Bytes of complete messages released so far. */
  get consumedBytes(): number {
    return this.released;
  }

  /**
   * Takes one fragment (`frameChars`: the length of the whole outer frame's text, when known) and
   * returns the message it completes, if it does. Throws DeliveryError when the sender broke a limit.
   */
  push(data: string, final: boolean | undefined, frameChars?: number): string | undefined {
    const { limits } = this;
    if (frameChars !== undefined && frameChars * 2 > limits.maximumFrameBytes) {
      throw new DeliveryError(`a frame of ${frameChars * 2} bytes exceeds maximumFrameBytes ${limits.maximumFrameBytes}`);
    }
    if (this.partChars === 0 && this.received - this.released >= limits.windowBytes) {
      throw new DeliveryError(`a message started with ${this.received - this.released} bytes outstanding, at or above windowBytes ${limits.windowBytes}`);
    }
    if (isLowSurrogate(data.charCodeAt(0)) || (final !== true && isHighSurrogate(data.charCodeAt(data.length - 1)))) {
      throw new DeliveryError("a fragment boundary splits a surrogate pair");
    }
    this.parts.push(data);
    this.partChars += data.length;
    if (this.partChars * 2 > limits.maximumMessageBytes) throw new DeliveryError(`a message exceeds maximumMessageBytes ${limits.maximumMessageBytes}`);
    if (final !== true) return undefined;
    const message = this.parts.length === 1 ? this.parts[0]! : this.parts.join("");
    this.parts = [];
    this.partChars = 0;
    this.received += utf16Bytes(message);
    this.unreleased.push(utf16Bytes(message));
    return message;
  }

  /** The consumer has applied the oldest message not yet released: returns the cumulative bytes to credit. */
  release(): number {
    if (this.head < this.unreleased.length) this.released += this.unreleased[this.head++]!;
    if (this.head === this.unreleased.length) {
      this.unreleased = [];
      this.head = 0;
    }
    return this.released;
  }

  /** Complete messages received and not yet released. */
  get unreleasedCount(): number {
    return this.unreleased.length - this.head;
  }
}
