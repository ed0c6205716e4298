import type { OutputSource } from "../probes.js";

/**
 * What every system a bench measures offers (this project, a peer, node-pty in the bench's process,
 * a floor shape), so one measurement function runs against each of them unchanged.
 */

/** Terminal size the bench asks for, on every system that takes one. */
export const COLS = 120;
export const ROWS = 40;

/** What a terminal runs: bash with the runner's integration script, `/bin/sh` prompting "$ ", or `yes`. */
export type Program = "bash" | "sh" | "yes";

/** A terminal opened through a system: keys in, text out. */
export interface Terminal {
  send(text: string): void;
  /** Adds a listener for output text; text that came before the first listener is handed to it. */
  output: OutputSource;
  /** Settles once any output arrived (the first prompt byte, for a shell). */
  firstOutput: Promise<void>;
  /** Ends the terminal's process and whatever carried it. */
  close(): Promise<void>;
}

/** A way to serve terminals, started. */
export interface TerminalSystem {
  open(program: Program): Promise<Terminal>;
  /** The processes that serve terminals, by role, now (sshd forks some for each connection). */
  processes(): Record<string, number[]>;
  /** Client processes of the system's own, by role (ssh), counted apart from the serving ones. */
  clients?(): Record<string, number[]>;
  stop(): Promise<void>;
}

/** The line that replaces a bash a system started with `program`, for systems whose terminals always start bash. */
export function execLine(program: Exclude<Program, "bash">): string {
  return program === "yes" ? "exec yes\r" : "exec env PS1='$ ' ENV= /bin/sh\r";
}

/** Starts a system, runs `work` with it, and stops it whatever happened. */
export async function withSystem<T>(start: () => Promise<TerminalSystem>, work: (system: TerminalSystem) => Promise<T>): Promise<T> {
  const system = await start();
  try {
    return await work(system);
  } finally {
    await system.stop();
  }
}
