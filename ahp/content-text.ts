import type { TerminalContentPart } from "./types.js";

/** A terminal's content as the raw text it was written as: every part's text, in order, as clients rebuild the screen. */
export function contentText(state: { content: readonly TerminalContentPart[] }): string {
  return state.content.map((part) => (part.type === "command" ? part.output : part.value)).join("");
}
