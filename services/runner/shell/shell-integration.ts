import { CommandLineReader } from "./command-line.js";
import type { LogEvent } from "../log/output-log.js";

/** Events the shell's marks turn into. */
export type ShellEvent = Extract<LogEvent, { kind: "command_executed" | "command_finished" | "cwd_changed" }>;

/**
 * Turns a shell's integration marks into command events: OSC 133 (and VS Code's 633) A/B/C/D for
 * prompt, input, execution and completion with its exit code, and OSC 7 or 633;P;Cwd= for the
 * working directory. The command line is not taken from the shell but read back from the input
 * written to it since the last command finished.
 */
export class ShellIntegration {
  private readonly input = new CommandLineReader();
  private running: { id: string; startedAt: number; inputAtStart: ReturnType<CommandLineReader["mark"]> } | undefined;
  private count = 0;
  private promptShown = false;
  private ranSincePrompt = false;

  constructor(private readonly now: () => number = Date.now) {}

  /** Bytes written to the terminal's input. */
  onInput(data: Buffer): void {
    this.input.feed(data);
  }

  /** The events one OSC payload from the output means (none for anything that is not a shell mark). */
  onOsc(payload: string): ShellEvent[] {
    const cwd = cwdFromOsc(payload);
    if (cwd !== undefined) return [{ kind: "cwd_changed", cwd }];
    const match = /^(?:133|633);([ABCD])(?:;(.*))?$/s.exec(payload);
    if (!match) return [];
    const [, mark, argument] = match;
    switch (mark) {
      case "A": {
        // Each prompt reads one line; a prompt that ran nothing (an empty line, a comment) used one up.
        if (this.promptShown && !this.ranSincePrompt) this.input.dropLine();
        this.promptShown = true;
        this.ranSincePrompt = false;
        // A new prompt without a finish mark: whatever ran ended without telling its status.
        return this.finish(undefined);
      }
      case "C":
        return this.execute();
      case "D":
        return this.finish(argument !== undefined && /^-?\d+$/.test(argument) ? Number(argument) : undefined);
      default:
        return [];
    }
  }

  private execute(): ShellEvent[] {
    if (this.running) return [];
    this.ranSincePrompt = true;
    const timestampMs = this.now();
    const commandLine = this.input.takeLine();
    this.running = { id: `cmd-${++this.count}`, startedAt: timestampMs, inputAtStart: this.input.mark() };
    return [{ kind: "command_executed", commandId: this.running.id, commandLine, timestampMs }];
  }

  private finish(exitCode: number | undefined): ShellEvent[] {
    const running = this.running;
    if (!running) return [];
    this.running = undefined;
    // What was typed while the command ran went to it; what was typed before it started waits for the next prompt.
    this.input.rewind(running.inputAtStart);
    const event: ShellEvent = { kind: "command_finished", commandId: running.id, durationMs: Math.max(0, this.now() - running.startedAt) };
    if (exitCode !== undefined) event.exitCode = exitCode;
    return [event];
  }
}

/** The directory an OSC 7 (`7;file://host/path`) or OSC 633;P;Cwd= payload reports, or undefined. */
export function cwdFromOsc(payload: string): string | undefined {
  if (payload.startsWith("7;")) {
    try {
      const url = new URL(payload.slice(2));
      return url.protocol === "file:" ? decodeURIComponent(url.pathname) : undefined;
    } catch {
      return undefined;
    }
  }
  if (payload.startsWith("633;P;Cwd=")) {
    // 633 values escape backslash, semicolon and control characters as \xHH.
    return payload.slice("633;P;Cwd=".length).replace(/\\x([0-9a-fA-F]{2})|\\\\/g, (all, hex: string | undefined) => (hex ? String.fromCharCode(parseInt(hex, 16)) : "\\"));
  }
  return undefined;
}
