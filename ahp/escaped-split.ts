import { notificationFrame } from "./json-rpc.js";

/** Characters JSON writes as a two-character escape (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`). */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x08, 0x0c, 0x0a, 0x0d, 0x09]);
/** Characters of the longest escape JSON writes for one UTF-16 unit (`\u001b`, a lone surrogate). */
const LONGEST_ESCAPE = 6;

/** Characters `JSON.stringify` writes for the UTF-16 unit at `index` of `text` (a surrogate pair counts one each). */
function escapedLength(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (SHORT_ESCAPES.has(code)) return 2;
  if (code < 0x20) return LONGEST_ESCAPE;
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(index + 1);
    return next >= 0xdc00 && next <= 0xdfff ? 1 : LONGEST_ESCAPE;
  }
  if (code >= 0xdc00 && code <= 0xdfff) {
    const previous = text.charCodeAt(index - 1);
    return previous >= 0xd800 && previous <= 0xdbff ? 1 : LONGEST_ESCAPE;
  }
  return 1;
}

/**
 * Cuts `text` into pieces whose JSON string literals (quotes included) are at most `budget`
 * characters, in order, never between the halves of a surrogate pair: how output is cut into
 * messages that fit a client's `maximumMessageBytes`. `budget` must hold the quotes and the longest
 * escape of one character (8).
 */
export function splitForEscapedLength(text: string, budget: number): string[] {
  if (budget < 2 + LONGEST_ESCAPE) throw new RangeError(`a budget of ${budget} characters cannot hold every character`);
  if (text.length * LONGEST_ESCAPE + 2 <= budget) return [text];
  const pieces: string[] = [];
  let start = 0;
  let used = 2;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const pair = code >= 0xd800 && code <= 0xdbff && index + 1 < text.length && escapedLength(text, index) === 1;
    const cost = pair ? 2 : escapedLength(text, index);
    if (used + cost > budget) {
      pieces.push(text.slice(start, index));
      start = index;
      used = 2;
    }
    used += cost;
    if (pair) index++;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** Characters of an `action` notification carrying `terminal/data` on `channel`, without its data (the largest serverSeq reserved). */
function dataEnvelopeOverhead(channel: string): number {
  return notificationFrame("action", { channel, action: { type: "terminal/data", data: "" }, serverSeq: Number.MAX_SAFE_INTEGER }).length - 2;
}

/** The smallest `maximumMessageBytes` that lets output on `channel` be cut into messages at all. */
export function minimumDataMessageBytes(channel: string): number {
  return 2 * (dataEnvelopeOverhead(channel) + 2 + LONGEST_ESCAPE);
}

/**
 * Output cut into `terminal/data` payloads whose `action` notifications on `channel` are each at
 * most `maximumMessageBytes` (UTF-16 bytes, as windowed delivery counts): a host can always split
 * output, so a client's limit shapes delivery rather than ending it.
 */
export function dataWithin(channel: string, data: string, maximumMessageBytes: number): string[] {
  return splitForEscapedLength(data, Math.floor(maximumMessageBytes / 2) - dataEnvelopeOverhead(channel));
}
