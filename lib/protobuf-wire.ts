/**
 * The few pieces of protobuf's wire format that hand-written encoders on hot paths need: varints
 * and a field's tag. Offsets pass 2^32, so the arithmetic is division, not bit operators.
 */

/** Bytes of `value` (a non-negative safe integer) as a protobuf varint. */
export function varintLength(value: number): number {
  let length = 1;
  for (; value >= 0x80; length++) value = Math.floor(value / 0x80);
  return length;
}

/** Writes `value` as a varint at `at`; returns where the next byte goes. */
export function writeVarint(into: Uint8Array, at: number, value: number): number {
  for (; value >= 0x80; value = Math.floor(value / 0x80)) into[at++] = (value % 0x80) | 0x80;
  into[at++] = value;
  return at;
}

/** Writes a field's tag and its varint (a value, or a length) at `at`; returns where the next byte goes. */
export function writeTagged(into: Uint8Array, at: number, tag: number, value: number): number {
  into[at] = tag;
  return writeVarint(into, at + 1, value);
}

/** A field's bytes when it holds a varint, or none when the value is 0 (proto3 leaves it out). */
export const varintField = (value: number): number => (value === 0 ? 0 : 1 + varintLength(value));

/** A length-delimited field's bytes (tag, length, content), or none when it is empty (proto3 leaves it out). */
export const lengthDelimitedField = (length: number): number => (length === 0 ? 0 : 1 + varintLength(length) + length);

/** Where a hand-written reader is in the bytes it reads. */
export interface WireCursor {
  at: number;
}

/** Varint bytes that hold any safe integer (7 bits each; 2^53 needs 8). */
const MAX_SAFE_VARINT_BYTES = 8;

/**
 * Reads the varint at `cursor.at`, moving past it. NaN when it runs past `end` or does not fit a
 * safe integer: a hand-written reader then leaves the message to protobuf's parser.
 */
export function readVarint(from: Uint8Array, cursor: WireCursor, end: number): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < MAX_SAFE_VARINT_BYTES && cursor.at < end; i++) {
    const byte = from[cursor.at++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value <= Number.MAX_SAFE_INTEGER ? value : NaN;
    scale *= 0x80;
  }
  return NaN;
}
