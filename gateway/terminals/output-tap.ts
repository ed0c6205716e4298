import type { TerminalAction, Uri } from "../../ahp/types.js";
import type { StateStore } from "../state/store.js";

/** Most output taken in while something is fetched for a snapshot: beyond it the output outruns the fetch, and the snapshot's own content serves as well. */
export const MAX_TAPPED_CHARS = 1024 * 1024;

/**
 * What a terminal commits while something is fetched from its runner (a screen rendered, missed
 * output read) and until the snapshot it is for is taken: the output text, up to MAX_TAPPED_CHARS kept
 * (the count goes on past it), and whether the terminal was resized or cleared meanwhile.
 */
export class OutputTap {
  readonly text: string[] = [];
  chars = 0;
  resized = false;
  cleared = false;
  /** Stops taking actions. */
  readonly release: () => void;

  constructor(store: StateStore, uri: Uri) {
    this.release = store.watch(uri, (action) => this.take(action));
  }

  /** True when more text came than is kept: the caller gives up rather than send a hole. */
  get overflowed(): boolean {
    return this.chars > MAX_TAPPED_CHARS;
  }

  private take(action: TerminalAction): void {
    if (action.type === "terminal/data") {
      // Past the bound the caller gives up: the text need not be kept.
      if (this.chars <= MAX_TAPPED_CHARS) this.text.push(action.data);
      this.chars += action.data.length;
    } else if (action.type === "terminal/resized") {
      this.resized = true;
    } else if (action.type === "terminal/cleared") {
      this.cleared = true;
    }
  }
}
