import type { TerminalState } from "../ahp/types.js";
import { printable } from "../lib/unsafe-text.js";
import { claimText, lifecycleText, type NameOf } from "./terminal-list.js";

/** What the header shows of the terminal on screen: its state, and whether it has printed anything yet. */
export interface HeaderContent {
  uri: string;
  state: TerminalState;
  hadOutput: boolean;
}

/**
 * Fills the header of the terminal on screen: title, working directory, state ("starting…" until the
 * first output), holder and size, as text (control and bidirectional characters spelled out).
 */
export function renderHeader(document: Document, { uri, state, hadOutput }: HeaderContent, ownClientId: string, nameOf?: NameOf): void {
  const byId = (id: string) => document.getElementById(id)!;
  const size = state.cols && state.rows ? ` · ${state.cols}×${state.rows}` : "";
  const starting = isRunning(state) && !hadOutput;
  // Each text is whole in its tooltip: a narrow window cuts them short.
  const texts = {
    "terminal-title": printable(state.title || uri),
    "terminal-cwd": state.cwd ? printable(pathOf(state.cwd)) : "",
    "terminal-state": printable(`${starting ? "starting…" : lifecycleText(state)} · ${claimText(state.claim, ownClientId, nameOf)}${size}`),
  };
  for (const [id, text] of Object.entries(texts)) {
    byId(id).textContent = text;
    byId(id).title = text;
  }
  byId("starting").hidden = !starting;
  (byId("rename") as HTMLButtonElement).disabled = !isRunning(state);
}

/** True while the terminal's process runs. */
export function isRunning(state: TerminalState): boolean {
  return lifecycleText(state) === "running";
}

/** A `file:` URI's path as people write it; any other URI as it is. */
function pathOf(uri: string): string {
  if (!uri.startsWith("file:")) return uri;
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri;
  }
}
