/**
 * Characters that must never appear in names others read (terminal ids, labels, titles): C0
 * controls, DEL, C1 controls (U+0085, NEXT LINE, among them) and the bidirectional controls that can
 * make a name display as something else (U+200E/U+200F marks, U+202A–U+202E embeddings and
 * overrides, U+2066–U+2069 isolates). The one table every such check reads.
 */
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
/** The same characters, every occurrence. */
const ALL_UNSAFE_CHARACTERS = new RegExp(UNSAFE_CHARACTERS.source, "gu");
/**
 * Characters that render as nothing (zero-width spaces and joiners, U+FEFF, soft hyphens,
 * variation selectors: Unicode's default-ignorable code points): two identifiers that differ only
 * by them look the same, so identifiers (terminal ids and URIs) refuse them beside the unsafe ones.
 * Titles keep them: emoji sequences are joined with U+200D.
 */
const INVISIBLE_CHARACTERS = /\p{Default_Ignorable_Code_Point}/u;
/** What a program-chosen text shows instead of an unsafe character, as a decoder shows a byte it cannot read. */
const REPLACEMENT_CHARACTER = "\ufffd";
/** How printed text spells the control characters people know by their escape. */
const NAMED_ESCAPES: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\u001b": "\\e" };

function codePointName(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** The first unsafe character in `text`, as `U+XXXX`, or undefined when there is none. */
export function unsafeCharacterIn(text: string): string | undefined {
  const found = UNSAFE_CHARACTERS.exec(text)?.[0];
  return found === undefined ? undefined : codePointName(found);
}

/** The first character an identifier may not hold (unsafe or invisible), as `U+XXXX`, or undefined when there is none. */
export function identifierCharacterProblem(text: string): string | undefined {
  const unsafe = unsafeCharacterIn(text);
  if (unsafe) return unsafe;
  const invisible = INVISIBLE_CHARACTERS.exec(text)?.[0];
  return invisible === undefined ? undefined : codePointName(invisible);
}

/** `text` with every unsafe character replaced by U+FFFD: how a text a program chose (a title) is kept. */
export function replaceUnsafeCharacters(text: string): string {
  return text.replace(ALL_UNSAFE_CHARACTERS, REPLACEMENT_CHARACTER);
}

/**
 * A text someone else chose, kept without refusing it: cut to `maxChars` (never between the halves
 * of a surrogate pair), each unsafe character replaced by U+FFFD.
 */
export function cappedSafeText(text: string, maxChars: number): string {
  let capped = text;
  if (text.length > maxChars) {
    const code = text.charCodeAt(maxChars - 1);
    capped = text.slice(0, code >= 0xd800 && code <= 0xdbff ? maxChars - 1 : maxChars);
  }
  return replaceUnsafeCharacters(capped);
}

/**
 * `text` as a terminal or a page may print it: every unsafe character spelled out as an escape
 * (`\n`, `\t`, `\e`, `\u{202E}`), so a name a program chose can neither move the cursor, start a new
 * line, nor turn the text around.
 */
export function printable(text: string): string {
  return text.replace(ALL_UNSAFE_CHARACTERS, (character) => NAMED_ESCAPES[character] ?? `\\u{${character.codePointAt(0)!.toString(16).toUpperCase()}}`);
}
