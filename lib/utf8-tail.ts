/** The most bytes a streaming decoder holds back: the first three of a four-byte character. */
const MAX_HELD_BYTES = 3;

/**
 * How many trailing bytes of `bytes` begin a UTF-8 character that is not complete yet: what a
 * streaming WHATWG decoder (TextDecoder with `stream: true`) holds back until the next chunk. Bytes
 * that can no longer become a character (a lone continuation byte, a lead byte followed by one that
 * cannot continue it, C0, C1, F5–FF, a surrogate or over-long start) are not held: the decoder has
 * already replaced them with U+FFFD.
 */
export function incompleteUtf8Tail(bytes: Uint8Array): number {
  const from = Math.max(0, bytes.length - MAX_HELD_BYTES);
  let lead = bytes.length - 1;
  while (lead >= from && isContinuation(bytes[lead]!)) lead--;
  if (lead < from) return 0;
  const needed = sequenceLength(bytes[lead]!);
  const have = bytes.length - lead;
  if (needed === 0 || have >= needed) return 0;
  for (let index = lead + 1; index < bytes.length; index++) {
    if (!continues(bytes[lead]!, bytes[index]!, index === lead + 1)) return 0;
  }
  return have;
}

/**
 * Follows a byte stream chunk by chunk and says how many bytes at its end a streaming decoder holds
 * back, without copying more than a few bytes of each chunk.
 */
export class Utf8Tail {
  private tail = new Uint8Array(0);

  /** Takes the next chunk; returns how many of the stream's last bytes are an unfinished character now. */
  push(chunk: Uint8Array): number {
    const window = new Uint8Array(this.tail.length + Math.min(chunk.length, MAX_HELD_BYTES));
    window.set(this.tail);
    window.set(chunk.subarray(chunk.length - (window.length - this.tail.length)), this.tail.length);
    const held = incompleteUtf8Tail(window);
    this.tail = window.slice(window.length - held);
    return held;
  }

  /** Forgets the held bytes (the decoder was flushed or replaced). */
  reset(): void {
    this.tail = new Uint8Array(0);
  }
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** The length of the character a lead byte starts; 0 for a byte that starts none. */
function sequenceLength(byte: number): number {
  if (byte >= 0xc2 && byte <= 0xdf) return 2;
  if (byte >= 0xe0 && byte <= 0xef) return 3;
  if (byte >= 0xf0 && byte <= 0xf4) return 4;
  return 0;
}

/** True when `byte` may follow `lead` (the second byte is narrower after E0, ED, F0 and F4: no over-long forms, surrogates or code points past U+10FFFF). */
function continues(lead: number, byte: number, second: boolean): boolean {
  if (!isContinuation(byte)) return false;
  if (!second) return true;
  if (lead === 0xe0) return byte >= 0xa0;
  if (lead === 0xed) return byte <= 0x9f;
  if (lead === 0xf0) return byte >= 0x90;
  if (lead === 0xf4) return byte <= 0x8f;
  return true;
}
