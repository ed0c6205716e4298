import { MAX_TITLE_LENGTH } from "../../lib/titles.js";

/** A title a program set, cut to MAX_TITLE_LENGTH (never between the halves of a surrogate pair), as terminals cut theirs. */
export function capTitle(title: string): string {
  if (title.length <= MAX_TITLE_LENGTH) return title;
  const code = title.charCodeAt(MAX_TITLE_LENGTH - 1);
  return title.slice(0, code >= 0xd800 && code <= 0xdbff ? MAX_TITLE_LENGTH - 1 : MAX_TITLE_LENGTH);
}
