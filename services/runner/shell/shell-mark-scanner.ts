import type { OutputKind } from "../log/output-log.js";
import { OscReader } from "./osc-reader.js";

/** OSC numbers that carry shell integration: 133 (prompt and command marks), 633 (VS Code's), 7 (working directory). */
const SHELL_MARK = /^(?:133|633|7);/;
const SHELL_MARK_PREFIXES = ["133;", "633;", "7;"];

/** A run of one chunk of output: what its bytes are, the index just past them, and the payload of the OSC sequence they end with. */
export interface OutputRun {
  kind: OutputKind;
  end: number;
  payload?: string;
  /**
   * Bytes at the end of the unsettled output that this run does not settle: the ESC that ended an
   * earlier chunk and turned out to start the next sequence rather than end the unsettled one.
   */
  keepUnsettled?: number;
}

/**
 * Reads a terminal's output for OSC sequences and cuts each chunk into runs: text, shell marks (OSC
 * 133, 633 and 7, complete), and at the end an unfinished sequence that may still turn out to be a
 * mark (`unsettled`). A run that is not unsettled settles the unsettled bytes before it (in earlier
 * chunks) as its own kind: a mark that completes makes them part of the mark; anything else, text.
 * A sequence longer than the OSC reader keeps is never a mark, so nothing is held back without bound.
 */
export class ShellMarkScanner {
  private readonly osc = new OscReader();
  /** Stream position of the next chunk. */
  private fed = 0;
  /** Stream position where the unsettled output begins, if there is any. */
  private unsettledFrom: number | undefined;

  /** The runs of the next chunk, in order, covering it whole; every completed OSC's payload rides on the run it ends. */
  feed(chunk: Buffer): OutputRun[] {
    if (chunk.length === 0) return [];
    const at = this.fed;
    this.fed += chunk.length;
    const runs: OutputRun[] = [];
    let from = 0;
    for (const { payload, start, end } of this.osc.feed(chunk)) {
      if (SHELL_MARK.test(payload)) {
        this.textBefore(runs, at, from, start);
        runs.push({ kind: "mark", end, payload });
      } else {
        runs.push({ kind: "text", end, payload });
      }
      this.unsettledFrom = undefined;
      from = end;
    }
    const pending = this.osc.pending();
    if (pending && couldBeShellMark(pending.head)) {
      this.textBefore(runs, at, from, pending.start);
      const start = Math.max(pending.start, from);
      // An ESC at the end may yet start a sequence of its own: it gets a run of its own, to be settled apart.
      if (pending.escapeAtEnd && chunk.length - 1 > start) runs.push({ kind: "unsettled", end: chunk.length - 1 });
      runs.push({ kind: "unsettled", end: chunk.length });
      this.unsettledFrom ??= at + pending.start;
    } else if (from < chunk.length) {
      runs.push({ kind: "text", end: chunk.length });
      this.unsettledFrom = undefined;
    }
    return runs;
  }

  /**
   * The text between `from` and a sequence beginning at `start` (negative: in an earlier chunk).
   * When it begins after the unsettled output, that output was another sequence that came to
   * nothing: this run settles it as text, but for the new sequence's own bytes in earlier chunks.
   */
  private textBefore(runs: OutputRun[], at: number, from: number, start: number): void {
    if (this.unsettledFrom !== undefined && at + start > this.unsettledFrom) {
      runs.push(start < 0 ? { kind: "text", end: from, keepUnsettled: -start } : { kind: "text", end: start });
      this.unsettledFrom = start < 0 ? at + start : undefined;
    } else if (start > from) {
      runs.push({ kind: "text", end: start });
    }
  }
}

/** True when the start of an OSC payload (or none yet: a lone ESC, or `ESC ]`) can still become a shell mark. */
function couldBeShellMark(head: string): boolean {
  return SHELL_MARK_PREFIXES.some((prefix) => (head.length <= prefix.length ? prefix.startsWith(head) : head.startsWith(prefix)));
}
