import { terminalReducer } from "./ahp/terminal-reducer.js";
import type { TerminalAction, TerminalContentPart, TerminalInfo, TerminalState, Uri } from "./ahp/types.js";
import type { Logger } from "../lib/logger.js";
import { InputStream } from "./input-stream.js";
import type { Runner } from "./runner-client.js";

/** Fraction of the scrollback cap dropped at once when it is exceeded, so trimming is not done on every chunk. */
const TRIM_SLACK = 0.1;

/**
 * One terminal as the gateway holds it: the authoritative AHP state (what every client's reducer
 * would compute), the runner terminal behind it, and a queue that keeps its side effects
 * (input, resize, clear, labels) in the order they were accepted.
 */
export class TerminalChannel {
  private current: TerminalState;
  private contentChars = 0;
  private effects: Promise<void> = Promise.resolve();
  private readonly watchers = new Set<(action: TerminalAction) => void>();
  /** True once a client named the terminal: titles the program sets no longer replace it. */
  titleSetByClient: boolean;
  /** Aborted when the gateway stops following the runner terminal (disposed, or the gateway is stopping). */
  readonly follow = new AbortController();
  /** The terminal's input, over one stream to the runner. */
  readonly input: InputStream;

  constructor(
    readonly uri: Uri,
    /** The runner the process lives in, and its id there. */
    readonly runner: Runner,
    readonly runnerId: string,
    initial: TerminalState,
    titleSetByClient: boolean,
    private readonly scrollbackChars: number,
    log: Logger,
  ) {
    this.current = initial;
    this.input = new InputStream(runner.terminals, runnerId, log);
    this.follow.signal.addEventListener("abort", () => this.input.close(), { once: true });
    this.titleSetByClient = titleSetByClient;
  }

  /** The current state. */
  get state(): TerminalState {
    return this.current;
  }

  /** True until the process has exited. */
  get running(): boolean {
    return this.current.lifecycle?.status !== "exited";
  }

  /** Calls `watcher` with every action applied from now on, until the returned function is called. */
  watch(watcher: (action: TerminalAction) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Applies an action through the reducer; output beyond the scrollback cap is trimmed from the front. */
  apply(action: TerminalAction): void {
    this.current = terminalReducer(this.current, action);
    for (const watcher of this.watchers) watcher(action);
    if (action.type === "terminal/data") {
      this.contentChars += action.data.length;
      if (this.contentChars > this.scrollbackChars) this.trim();
    } else if (action.type === "terminal/cleared") {
      this.contentChars = 0;
    }
  }

  /** The terminal's row in the root list. */
  info(): TerminalInfo {
    const { title, claim, exitCode, lifecycle } = this.current;
    const info: TerminalInfo = { resource: this.uri, title, claim };
    if (exitCode !== undefined) info.exitCode = exitCode;
    if (lifecycle) info.lifecycle = lifecycle;
    return info;
  }

  /** Runs `effect` after every effect queued before it; a failure is handed to `onError` and does not stop the queue. */
  queue(effect: () => Promise<unknown>, onError: (err: unknown) => void): Promise<void> {
    this.effects = this.effects.then(effect).then(
      () => undefined,
      (err: unknown) => onError(err),
    );
    return this.effects;
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

function textOf(part: TerminalContentPart): string {
  return part.type === "command" ? part.output : part.value;
}

function withText(part: TerminalContentPart, text: string): TerminalContentPart {
  return part.type === "command" ? { ...part, output: text } : { ...part, value: text };
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
