import { takesOutput, terminalReducer } from "../../ahp/terminal-reducer.js";
import type { TerminalAction, TerminalContentPart, TerminalInfo, TerminalState, Uri } from "../../ahp/types.js";
import type { TextBlocks } from "./text-blocks.js";
import { TextRope } from "./text-rope.js";

/** Fraction of the scrollback cap dropped at once when it is exceeded, so trimming is not done on every chunk. */
const TRIM_SLACK = 0.1;

/** A terminal's state without its content: the fields every runner event and dispatch check read. */
export type TerminalSummary = Readonly<Omit<TerminalState, "content">>;

/**
 * One terminal channel's authoritative AHP state (what every client's reducer computes from the
 * same actions), with its content capped at the scrollback size. The reducer decides the shape of
 * the content (which part output goes to, command parts, clearing); the text of each part is kept
 * apart, outside V8's heap in blocks shared by every terminal (`blocks`), and the state with its
 * text is put together only when it is asked for (a snapshot). Only the state store changes it;
 * it gives the blocks back (`clearContent`) once it drops the record.
 */
export class TerminalRecord {
  /** The state, with every content part's text left empty: `texts` holds it, part by part. */
  private meta: TerminalState;
  private texts: TextRope[];
  private contentChars = 0;
  private whole: TerminalState | undefined;

  constructor(
    readonly uri: Uri,
    initial: TerminalState,
    private readonly scrollbackChars: number,
    private readonly blocks: TextBlocks,
    /** Who the terminal belongs to (the runner's `ahp.owner` label); undefined when none was recorded. */
    readonly owner?: string,
  ) {
    this.meta = { ...initial, content: initial.content.map((part) => withText(part, "")) };
    this.texts = initial.content.map((part) => {
      const rope = new TextRope(this.blocks);
      rope.append(textOf(part));
      this.contentChars += rope.length;
      return rope;
    });
  }

  /** The current state, text included (put together once per change). */
  get state(): TerminalState {
    this.whole ??= { ...this.meta, content: this.meta.content.map((part, i) => withText(part, this.texts[i]!.text())) };
    return this.whole;
  }

  /** The current state without its content. */
  get summary(): TerminalSummary {
    return this.meta;
  }

  /** True until the process has exited. */
  get running(): boolean {
    return isRunning(this.meta);
  }

  /** Applies an action through the reducer; output beyond the scrollback cap is trimmed from the front. */
  apply(action: TerminalAction): void {
    this.whole = undefined;
    const parts = this.meta.content.length;
    if (action.type === "terminal/data") {
      // Output goes on in the last part, or the reducer opens the part that takes it (the rule is the reducer's
      // `takesOutput`); the text goes to that part's rope, so a chunk copies neither the state nor its parts.
      if (!takesOutput(this.meta.content.at(-1))) this.meta = terminalReducer(this.meta, { type: "terminal/data", data: "" });
      if (this.meta.content.length > parts) this.texts.push(new TextRope(this.blocks));
      this.texts.at(-1)!.append(action.data);
      this.contentChars += action.data.length;
      if (this.contentChars > this.scrollbackChars) this.trim();
      return;
    }
    this.meta = terminalReducer(this.meta, action);
    if (this.meta.content.length === 0) this.dropTexts();
    while (this.texts.length < this.meta.content.length) this.texts.push(new TextRope(this.blocks));
  }

  /**
   * Drops the content and gives its blocks back; the rest of the state stays. For a terminal nobody
   * here reads (it is rebuilt from the runner when someone does), and for a record no longer read.
   */
  clearContent(): void {
    this.whole = undefined;
    this.meta = { ...this.meta, content: [] };
    this.dropTexts();
  }


  /**
   * A record with this one's content and output-borne state (size, cwd, commands, lifecycle) and
   * `row`'s claim and title: a rebuilt record taking the place of `row` while keeping what another
   * source decides. A lifecycle `row` already reports as exited stays so.
   */
  withRowOf(row: TerminalRecord, titleFromRow: boolean): TerminalRecord {
    const next = new TerminalRecord(this.uri, { ...this.meta, content: [] }, this.scrollbackChars, this.blocks, row.owner);
    next.meta = { ...this.meta, claim: row.meta.claim };
    if (titleFromRow) next.meta.title = row.meta.title;
    if (!row.running && this.running) {
      next.meta.lifecycle = row.meta.lifecycle;
      if (row.meta.exitCode !== undefined) next.meta.exitCode = row.meta.exitCode;
    }
    // The content moves to the new record: this one keeps none, so it cannot give those blocks back.
    next.texts = this.texts;
    next.contentChars = this.contentChars;
    this.meta = { ...this.meta, content: [] };
    this.texts = [];
    this.contentChars = 0;
    this.whole = undefined;
    return next;
  }

  /** The terminal's row in the root list. */
  row(): TerminalInfo {
    const { title, claim, exitCode, lifecycle } = this.meta;
    const info: TerminalInfo = { resource: this.uri, title, claim };
    if (exitCode !== undefined) info.exitCode = exitCode;
    if (lifecycle) info.lifecycle = lifecycle;
    return info;
  }

  private trim(): void {
    const target = Math.floor(this.scrollbackChars * (1 - TRIM_SLACK));
    let dropped = 0;
    while (dropped < this.texts.length - 1 && this.contentChars - this.texts[dropped]!.length >= target) this.contentChars -= this.texts[dropped++]!.length;
    if (dropped > 0) {
      for (const rope of this.texts.slice(0, dropped)) rope.release();
      this.texts = this.texts.slice(dropped);
      this.meta = { ...this.meta, content: this.meta.content.slice(dropped) };
    }
    if (this.contentChars > target && this.texts.length > 0) this.contentChars -= this.texts[0]!.cutFront(this.contentChars - target);
  }

  private dropTexts(): void {
    for (const rope of this.texts) rope.release();
    this.texts = [];
    this.contentChars = 0;
  }
}

/** True while a terminal state says its process runs. */
export function isRunning(state: TerminalState): boolean {
  return state.lifecycle?.status !== "exited";
}

function textOf(part: TerminalContentPart): string {
  return part.type === "command" ? part.output : part.value;
}

function withText(part: TerminalContentPart, text: string): TerminalContentPart {
  return part.type === "command" ? { ...part, output: text } : { ...part, value: text };
}

