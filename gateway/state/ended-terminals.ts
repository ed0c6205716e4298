import type { CommandPart, TerminalContentPart, TerminalState, Uri } from "../../ahp/types.js";

/**
 * How long a released terminal stays readable (1.0's historical terminals): a tool result in a
 * transcript points at its terminal, and the transcript is mostly read again within the hour the
 * work was done; a gateway restart forgets them sooner (they live in this process only).
 */
export const ENDED_RETENTION_MS = 60 * 60 * 1000;
/**
 * Content characters kept over every released terminal: 16 Mi characters (32 MiB as UTF-16), the
 * full default scrollback of some 80 terminals. The oldest are forgotten first beyond it.
 */
export const ENDED_BUDGET_CHARS = 16 * 1024 * 1024;
/** Released terminals kept at most, however small: each costs its state besides its content. */
export const ENDED_MAX_TERMINALS = 1000;

/** A part's shape without its text: a command's fields, or nothing for unclassified output. */
type PartShape = { length: number; command?: Omit<CommandPart, "output"> };

interface Retained {
  rest: Omit<TerminalState, "content">;
  owner: string | undefined;
  text: string;
  parts: PartShape[];
  until: number;
}

/**
 * Terminals that ended and were released, kept compactly (their content as one string and the
 * parts' boundaries) for a bounded time and within a bounded total, so a 1.0 client subscribing
 * to one gets its exited state; the state is rebuilt from that when it is asked for.
 */
export class EndedTerminals {
  private readonly kept = new Map<Uri, Retained>();
  private chars = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Keeps a released terminal's final state and owner (replacing an older one at the same URI). */
  keep(uri: Uri, state: TerminalState, owner?: string): void {
    this.forget(uri);
    const { content, ...rest } = state;
    const text = content.map((part) => (part.type === "command" ? part.output : part.value)).join("");
    if (text.length > ENDED_BUDGET_CHARS) return;
    const parts = content.map((part): PartShape => {
      if (part.type !== "command") return { length: part.value.length };
      const { output, ...command } = part;
      return { length: output.length, command };
    });
    this.kept.set(uri, { rest, owner, text, parts, until: this.now() + ENDED_RETENTION_MS });
    this.chars += text.length;
    for (const [oldest] of this.kept) {
      if (this.chars <= ENDED_BUDGET_CHARS && this.kept.size <= ENDED_MAX_TERMINALS) break;
      this.forget(oldest);
    }
  }

  /** The released terminal's state, rebuilt, or undefined when it was never kept or is forgotten. */
  get(uri: Uri): TerminalState | undefined {
    this.expire();
    const retained = this.kept.get(uri);
    if (!retained) return undefined;
    let at = 0;
    const content = retained.parts.map((shape): TerminalContentPart => {
      const text = retained.text.slice(at, (at += shape.length));
      return shape.command ? { ...shape.command, output: text } : { type: "unclassified", value: text };
    });
    return { ...retained.rest, content };
  }

  /** Who a kept released terminal belonged to; undefined when none was recorded or it is not kept. */
  ownerOf(uri: Uri): string | undefined {
    this.expire();
    return this.kept.get(uri)?.owner;
  }

  /** Forgets a released terminal (its URI is in use again). */
  forget(uri: Uri): void {
    const retained = this.kept.get(uri);
    if (!retained) return;
    this.kept.delete(uri);
    this.chars -= retained.text.length;
  }

  private expire(): void {
    const now = this.now();
    // Kept in the order they were released, so the first one not yet due ends the sweep.
    for (const [uri, { until }] of this.kept) {
      if (until > now) break;
      this.forget(uri);
    }
  }
}
