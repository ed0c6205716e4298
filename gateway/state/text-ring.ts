/**
 * Bytes per character: the ring holds UTF-16 code units, so a string comes back exactly as it went
 * in (a lone surrogate too), and its size is its length, known without reading it.
 */
const BYTES_PER_CHAR = 2;

/** Where a kept text lies in the ring, as character positions counted since the ring began. */
export interface TextSpan {
  readonly start: number;
  readonly length: number;
}

/**
 * Text kept outside V8's heap, in one buffer allocated at the first write and then written over in
 * turn: copying a piece in costs a few hundredths of a nanosecond per character, where keeping it as
 * a string made every young-generation collection copy it again while it lived. A piece that would
 * cross the end starts over at the front; the oldest pieces are written over first, and `oldest`
 * says which are gone.
 */
export class TextRing {
  private bytes: Buffer | undefined;
  /** Characters written since the ring began, the room left at the end before each new lap included. */
  private written = 0;

  constructor(readonly capacityChars: number) {
    if (!Number.isSafeInteger(capacityChars) || capacityChars <= 0) throw new RangeError(`capacity must be a positive integer, got ${capacityChars}`);
  }

  /** The first position still held: a span that starts before it was written over. */
  get oldest(): number {
    return Math.max(0, this.written - this.capacityChars);
  }

  /** Copies `text` in and returns its span; a text longer than the ring writes over everything and is itself gone. */
  keep(text: string): TextSpan {
    if (text.length > this.capacityChars) {
      const span = { start: this.written, length: text.length };
      this.written += this.capacityChars + text.length;
      return span;
    }
    let at = this.written % this.capacityChars;
    if (at + text.length > this.capacityChars) {
      this.written += this.capacityChars - at;
      at = 0;
    }
    this.bytes ??= Buffer.allocUnsafeSlow(this.capacityChars * BYTES_PER_CHAR);
    this.bytes.write(text, at * BYTES_PER_CHAR, "utf16le");
    const span = { start: this.written, length: text.length };
    this.written += text.length;
    return span;
  }

  /** True while nothing was written over `span`. */
  holds(span: TextSpan): boolean {
    return span.start >= this.oldest;
  }

  /** The text of a span the ring still holds. */
  read(span: TextSpan): string {
    if (!this.holds(span)) throw new RangeError(`characters ${span.start} to ${span.start + span.length} were written over`);
    if (span.length === 0 || !this.bytes) return "";
    const at = (span.start % this.capacityChars) * BYTES_PER_CHAR;
    return this.bytes.toString("utf16le", at, at + span.length * BYTES_PER_CHAR);
  }
}
