import { terminalReducer } from "../../ahp/terminal-reducer.js";
import type { TerminalAction, TerminalContentPart, TerminalInfo, TerminalState, Uri } from "../../ahp/types.js";

/** Fraction of the scrollback cap dropped at once when it is exceeded, so trimming is not done on every chunk. */
const TRIM_SLACK = 0.1;

/**
 * One terminal channel's authoritative AHP state (what every client's reducer computes from the
 * same actions), with its content capped at the scrollback size. Only the state store changes it.
 */
export class TerminalRecord {
  private current: TerminalState;
  private contentChars = 0;

  constructor(
    readonly uri: Uri,
    initial: TerminalState,
    private readonly scrollbackChars: number,
  ) {
    this.current = initial;
  }

  /** The current state. */
  get state(): TerminalState {
    return this.current;
  }

  /** True until the process has exited. */
  get running(): boolean {
    return isRunning(this.current);
  }

  /** Applies an action through the reducer; output beyond the scrollback cap is trimmed from the front. */
  apply(action: TerminalAction): void {
    this.current = terminalReducer(this.current, action);
    if (action.type === "terminal/data") {
      this.contentChars += action.data.length;
      if (this.contentChars > this.scrollbackChars) this.trim();
    } else if (action.type === "terminal/cleared") {
      this.contentChars = 0;
    }
  }

  /** The terminal's row in the root list. */
  row(): TerminalInfo {
    const { title, claim, exitCode, lifecycle } = this.current;
    const info: TerminalInfo = { resource: this.uri, title, claim };
    if (exitCode !== undefined) info.exitCode = exitCode;
    if (lifecycle) info.lifecycle = lifecycle;
    return info;
  }

  private trim(): void {
    const target = Math.floor(this.scrollbackChars * (1 - TRIM_SLACK));
    const content = [...this.current.content];
    let total = this.contentChars;
    while (content.length > 1 && total - textOf(content[0]!).length >= target) total -= textOf(content.shift()!).length;
    if (total > target && content.length > 0) {
      const first = content[0]!;
      let cut = total - target;
      const text = textOf(first);
      // Never split a surrogate pair: cutting before a low surrogate would leave half a character.
      if (cut < text.length && isLowSurrogate(text.charCodeAt(cut))) cut++;
      content[0] = withText(first, text.slice(cut));
      total -= cut;
    }
    this.contentChars = total;
    this.current = { ...this.current, content };
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

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
