/**
 * Characters that must never appear in names others read (terminal ids, labels): C0 controls, DEL,
 * C1 controls (U+0085, NEXT LINE, among them) and the bidirectional controls that can make a name
 * display as something else (U+200E/U+200F marks, U+202A–U+202E embeddings and overrides,
 * U+2066–U+2069 isolates). The one table every such check reads.
 */
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** The first unsafe character in `text`, as `U+XXXX`, or undefined when there is none. */
export function unsafeCharacterIn(text: string): string | undefined {
  const found = UNSAFE_CHARACTERS.exec(text)?.[0];
  return found === undefined ? undefined : `U+${found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}
