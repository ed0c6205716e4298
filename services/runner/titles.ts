/** Longest title a caller may give or a program may set: a window title, not a document (a flood of huge titles would fill memory). */
export const MAX_TITLE_LENGTH = 4 * 1024;

/** A title a program set, cut to MAX_TITLE_LENGTH (never between the halves of a surrogate pair), as terminals cut theirs. */
export function capTitle(title: string): string {
  if (title.length <= MAX_TITLE_LENGTH) return title;
  const code = title.charCodeAt(MAX_TITLE_LENGTH - 1);
  return title.slice(0, code >= 0xd800 && code <= 0xdbff ? MAX_TITLE_LENGTH - 1 : MAX_TITLE_LENGTH);
}
