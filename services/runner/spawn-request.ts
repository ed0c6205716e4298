import { SignalTarget, TerminalMode, type SpawnRequest } from "../../gen/terminal/v1/terminal_pb.js";
import { RunnerError } from "./errors.js";
import type { SignalTarget as DomainSignalTarget } from "./terminal.js";
import type { SpawnRequestOptions, TerminalMode as DomainMode } from "./terminal-registry.js";

/** Largest accepted width or height: above any real screen, well below what breaks kernels and TUIs. */
export const MAX_TERMINAL_DIMENSION = 2000;
/** Size of a terminal whose spawn names none. */
export const DEFAULT_SIZE = { cols: 80, rows: 24 };
/** Longest accepted caller-chosen id. */
const MAX_ID_LENGTH = 256;

const MODES: Record<TerminalMode, DomainMode> = {
  [TerminalMode.UNSPECIFIED]: "auto",
  [TerminalMode.AUTO]: "auto",
  [TerminalMode.PTY]: "pty",
  [TerminalMode.PIPES]: "pipes",
};

/** Checks a SpawnRequest's shape and turns it into the registry's options; INVALID_ARGUMENT names the first problem. */
export function spawnOptionsFromRequest(request: SpawnRequest): SpawnRequestOptions {
  if (request.argv.length > 0 && request.command) {
    throw new RunnerError("invalid_argument", "set either argv or command, not both");
  }
  if (request.argv.length > 0 && !request.argv[0]) throw new RunnerError("invalid_argument", "argv[0] must name a program");
  if (request.id.length > MAX_ID_LENGTH || /[\u0000-\u001f\u007f]/.test(request.id)) {
    throw new RunnerError("invalid_argument", `id must be at most ${MAX_ID_LENGTH} characters without control characters`);
  }
  const mode = MODES[request.mode];
  if (mode === undefined) throw new RunnerError("invalid_argument", `unknown mode ${request.mode}`);
  return {
    id: request.id,
    argv: request.argv,
    command: request.command,
    shell: request.shell,
    cwd: request.cwd,
    env: request.env,
    ...checkedSize(request.cols ?? DEFAULT_SIZE.cols, request.rows ?? DEFAULT_SIZE.rows),
    mode,
    title: request.title,
    labels: request.labels,
  };
}

/** The size if both dimensions are within 1..MAX_TERMINAL_DIMENSION; INVALID_ARGUMENT otherwise. */
export function checkedSize(cols: number, rows: number): { cols: number; rows: number } {
  for (const [name, value] of [["cols", cols], ["rows", rows]] as const) {
    if (!Number.isInteger(value) || value < 1 || value > MAX_TERMINAL_DIMENSION) {
      throw new RunnerError("invalid_argument", `${name} must be between 1 and ${MAX_TERMINAL_DIMENSION}, got ${value}`);
    }
  }
  return { cols, rows };
}

/** The domain's signal target for the RPC enum (unspecified means the group). */
export function signalTargetFrom(target: SignalTarget): DomainSignalTarget {
  if (target === SignalTarget.PROCESS) return "process";
  if (target === SignalTarget.GROUP || target === SignalTarget.UNSPECIFIED) return "group";
  throw new RunnerError("invalid_argument", `unknown signal target ${target}`);
}
