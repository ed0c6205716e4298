import { unsafeCharacterIn } from "../../lib/unsafe-text.js";

/** Longest terminal URI a client may name: every client is sent it, and the runner keeps it as a label. */
export const MAX_URI_LENGTH = 2 * 1024;

/** Whitespace of any kind, which a URI never holds (RFC 3986 has it percent-encoded). */
const WHITESPACE = /\s/u;

/** Why `uri` cannot name a terminal (too long, a control, bidi or whitespace character), or undefined when it can. */
export function uriProblem(uri: string): string | undefined {
  if (uri.length > MAX_URI_LENGTH) return `a terminal URI is at most ${MAX_URI_LENGTH} characters, got ${uri.length}`;
  const unsafe = unsafeCharacterIn(uri);
  if (unsafe) return `a terminal URI may not hold ${unsafe} (control and bidirectional characters are refused)`;
  if (WHITESPACE.test(uri)) return "a terminal URI may not hold whitespace (percent-encode it)";
  return undefined;
}
