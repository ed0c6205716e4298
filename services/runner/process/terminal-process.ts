/** How a process ended: its exit code (128 when a signal killed it) and the signal's name ("" when none). */
export interface ProcessExit {
  exitCode: number;
  signal: string;
}

/** What to start: the program, its arguments, where and with which environment, at which size. */
export interface ProcessSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  /** The account to start it as; undefined: the runner's own. */
  runAs?: { name: string; uid: number; gid: number };
}

/** Where a process delivers its output and, once all of it has been read, its exit. */
export interface ProcessHandlers {
  onData(data: Buffer): void;
  /** Called once, after the last `onData`. */
  onExit(exit: ProcessExit): void;
}

/** A running process as a terminal drives it, whether in a pty or on pipes. */
export interface TerminalProcess {
  readonly pid: number;
  readonly isPty: boolean;
  /** Sends bytes to the process's input, in order. */
  write(data: Buffer): void;
  /** Signals end of input: closes stdin on pipes, sends the EOF character under a pty. */
  endInput(): void;
  /** Applies a new size (pty) or does nothing (pipes). */
  resize(cols: number, rows: number): void;
  /** Stops reading output: the process blocks once the kernel's buffer is full. */
  pause(): void;
  /** Reads output again. */
  resume(): void;
}

/** Starts a process in a pty or on pipes: the port terminals drive processes through, and the seam where tests put a fake. */
export interface ProcessLauncher {
  readonly ptyAvailable: boolean;
  launch(spec: ProcessSpec, handlers: ProcessHandlers, isPty: boolean): TerminalProcess;
}

/** The exit of a process killed by a signal: code 128 and the signal's name. */
export function exitBySignal(signal: string): ProcessExit {
  return { exitCode: 128, signal };
}
