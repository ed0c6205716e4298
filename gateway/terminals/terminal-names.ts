import { identifierCharacterProblem } from "../../lib/unsafe-text.js";

/** Longest terminal URI a client may name: every client is sent it, and the runner keeps it as a label. */
export const MAX_URI_LENGTH = 2 * 1024;

/**
 * URI schemes a terminal channel may have: the spec's own, VS Code's (`agenthost-terminal://…`), the
 * official fixtures' `agenthost:`, and implementation-defined `x-…` schemes (reserved for that from
 * 0.8). Anything else (`javascript:`, `http:`, `file:`, other AHP channel kinds) is refused: clients
 * show and may open these URIs.
 */
const TERMINAL_URI_SCHEMES: ReadonlySet<string> = new Set(["ahp-terminal", "agenthost-terminal", "agenthost"]);
/** The prefix AHP reserves for implementation-defined schemes. */
const EXTENSION_SCHEME_PREFIX = "x-";

/** Whitespace of any kind, which a URI never holds (RFC 3986 has it percent-encoded). */
const WHITESPACE = /\s/u;
/** An RFC 3986 scheme and its colon at the start of a URI. */
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/**
 * Why `uri` cannot name a terminal (too long; a control, bidirectional, invisible or whitespace
 * character; no scheme, or one terminals do not use), or undefined when it can.
 */
export function uriProblem(uri: string): string | undefined {
  if (uri.length > MAX_URI_LENGTH) return `a terminal URI is at most ${MAX_URI_LENGTH} characters, got ${uri.length}`;
  const unsafe = identifierCharacterProblem(uri);
  if (unsafe) return `a terminal URI may not hold ${unsafe} (control, bidirectional and invisible characters are refused)`;
  if (WHITESPACE.test(uri)) return "a terminal URI may not hold whitespace (percent-encode it)";
  const scheme = SCHEME.exec(uri)?.[1]?.toLowerCase();
  if (scheme === undefined) return `${JSON.stringify(uri)} is not a URI: it needs a scheme such as ahp-terminal:`;
  if (!TERMINAL_URI_SCHEMES.has(scheme) && !scheme.startsWith(EXTENSION_SCHEME_PREFIX)) {
    return `the ${scheme}: scheme does not name terminals (use ahp-terminal:, agenthost-terminal:, agenthost: or an x- scheme)`;
  }
  return undefined;
}
