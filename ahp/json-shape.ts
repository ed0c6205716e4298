/**
 * Deepest nesting of arrays and objects a message may have. AHP messages nest a handful of levels;
 * parsing millions of levels stalls the process for seconds, for every connection it serves.
 */
export const MAX_JSON_DEPTH = 128;
/**
 * Most values (array items, object members and containers) a message may hold. The longest list
 * an AHP client sends is a reconnect naming every terminal it follows, some thousands; parsing a
 * frame of millions of tiny objects holds the event loop for seconds and the heap for good.
 */
export const MAX_JSON_VALUES = 100_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** The bounds `jsonShapeFault` checks. */
export interface JsonShapeLimits {
  maxDepth: number;
  maxValues: number;
}

const DEFAULT_LIMITS: JsonShapeLimits = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_JSON_VALUES };

/**
 * Why `text`, read as JSON, is too deep or holds too many values to be worth parsing, or undefined
 * when it is neither: one pass that skips over strings (so brackets inside them do not count) and
 * stops at the first bound passed, before anything is parsed. Every array, object, string, number
 * and literal is a value, however long; object keys are not. Malformed text is left for the parser
 * to refuse.
 */
export function jsonShapeFault(text: string, { maxDepth, maxValues }: JsonShapeLimits = DEFAULT_LIMITS): string | undefined {
  // For each open container, whether it is an object (whose next string is a key).
  const inObject: boolean[] = [];
  let keyNext = false;
  let values = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (inObject.push(code === OPEN_BRACE) > maxDepth) return `nested deeper than ${maxDepth} levels`;
      keyNext = code === OPEN_BRACE;
      values++;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      inObject.pop();
    } else if (code === COMMA) {
      keyNext = inObject.at(-1) === true;
    } else if (code === QUOTE) {
      i = closingQuote(text, i + 1);
      if (i < 0) return undefined;
      if (keyNext) keyNext = false;
      else values++;
    } else if (isLiteral(code)) {
      while (i + 1 < text.length && isLiteral(text.charCodeAt(i + 1))) i++;
      values++;
    }
    if (values > maxValues) return `more than ${maxValues} JSON values`;
  }
  return undefined;
}

/** True for the characters a number, `true`, `false` or `null` is made of (letters, digits, `.`, `+`, `-`). */
function isLiteral(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x2e || code === 0x2b || code === 0x2d;
}

/** The index of the quote that ends the string whose content starts at `start`, or -1 when it never ends. */
function closingQuote(text: string, start: number): number {
  let from = start;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    for (let j = quote - 1; j >= start && text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}
