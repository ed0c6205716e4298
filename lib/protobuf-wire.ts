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
