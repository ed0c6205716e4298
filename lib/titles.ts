import { cappedSafeText, unsafeCharacterIn } from "./unsafe-text.js";

/** Longest title a caller may give or a program may set: a window title, not a document (a flood of huge titles would fill every reader's memory). */
export const MAX_TITLE_LENGTH = 4 * 1024;

/** Why `title` cannot be a terminal's title (too long, or a control or bidi character), or undefined when it can. The one rule runner and gateway both apply. */
export function titleProblem(title: string): string | undefined {
  if (title.length > MAX_TITLE_LENGTH) return `a title is at most ${MAX_TITLE_LENGTH} characters, got ${title.length}`;
  const unsafe = unsafeCharacterIn(title);
  return unsafe ? `a title may not hold ${unsafe} (control and bidirectional characters are refused)` : undefined;
}

/**
 * A title a program set (OSC 0 or 2), made to pass `titleProblem`: a program cannot be refused, so
 * its title is cut to MAX_TITLE_LENGTH (never between the halves of a surrogate pair) and each
 * control or bidirectional character becomes U+FFFD.
 */
export function titleFromProgram(title: string): string {
  return cappedSafeText(title, MAX_TITLE_LENGTH);
}
