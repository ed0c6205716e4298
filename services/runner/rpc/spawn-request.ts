import { SignalTarget, TerminalMode, type SpawnRequest } from "../../../gen/terminal/v1/terminal_pb.js";
import { RunnerError } from "../runner-error.js";
import { MAX_TITLE_LENGTH, titleProblem } from "../../../lib/titles.js";
import { identifierCharacterProblem, unsafeCharacterIn } from "../../../lib/unsafe-text.js";
import { TERMINAL_TYPE, TERMINAL_TYPE_RULE } from "../../../lib/terminal-type.js";
import type { SignalTarget as DomainSignalTarget } from "../terminal/terminal.js";
import type { SpawnRequestOptions, TerminalMode as DomainMode } from "../terminal/terminal-registry.js";

/** Largest accepted width or height: above any real screen, well below what breaks kernels and TUIs. */
export const MAX_TERMINAL_DIMENSION = 2000;
/** Size of a terminal whose spawn names none. */
export const DEFAULT_SIZE = { cols: 80, rows: 24 };
/** Longest accepted caller-chosen id. */
const MAX_ID_LENGTH = 256;
/** Labels a terminal may carry: a gateway keeps three; the rest is the caller's bookkeeping, not storage. */
export const MAX_LABELS = 64;
/** Longest label key, and longest label value (a claim's JSON with its URIs fits many times over). */
export const MAX_LABEL_KEY_LENGTH = 256;
export const MAX_LABEL_VALUE_LENGTH = 16 * 1024;


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
  const idProblem = identifierCharacterProblem(request.id);
  if (request.id.length > MAX_ID_LENGTH || idProblem) {
    throw new RunnerError("invalid_argument", `id must be at most ${MAX_ID_LENGTH} characters without control, bidirectional or invisible characters${idProblem ? ` (it holds ${idProblem})` : ""}`);
  }
  noNul("command", request.command);
  noNul("shell", request.shell);
  noNul("cwd", request.cwd);
  request.argv.forEach((word, index) => noNul(`argv[${index}]`, word));
  checkEnv(request.env);
  checkLabels(request.labels);
  if (titleProblem(request.title)) {
    throw new RunnerError("invalid_argument", `title must be at most ${MAX_TITLE_LENGTH} characters without control or bidirectional characters`);
  }
  if (request.term && !TERMINAL_TYPE.test(request.term)) {
    throw new RunnerError("invalid_argument", `term must be ${TERMINAL_TYPE_RULE}, got ${JSON.stringify(request.term)}`);
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
    runAs: request.runAs,
    checkShell: request.checkShell,
    term: request.term,
    uniqueLabel: request.uniqueLabel || undefined,
  };
}

/** Merged label changes (SetLabels) are held to the same rules as labels at spawn. */
export function checkLabels(labels: Record<string, string>): void {
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) throw new RunnerError("invalid_argument", `at most ${MAX_LABELS} labels, got ${entries.length}`);
  for (const [key, value] of entries) {
    if (key === "" || key.length > MAX_LABEL_KEY_LENGTH) throw new RunnerError("invalid_argument", `label keys must be 1 to ${MAX_LABEL_KEY_LENGTH} characters`);
    if (value.length > MAX_LABEL_VALUE_LENGTH) throw new RunnerError("invalid_argument", `label ${JSON.stringify(key)}: values must be at most ${MAX_LABEL_VALUE_LENGTH} characters`);
    const unsafe = unsafeCharacterIn(key) ?? unsafeCharacterIn(value);
    if (unsafe) throw new RunnerError("invalid_argument", `label ${JSON.stringify(key)} contains ${unsafe}: control and bidirectional characters are refused`);
  }
}

/** Environment names the kernel can pass on as they were meant: non-empty, no `=` (it would set another variable) and no NUL. */
function checkEnv(env: Record<string, string>): void {
  for (const [key, value] of Object.entries(env)) {
    if (key === "" || key.includes("=") || key.includes("\0")) throw new RunnerError("invalid_argument", `environment variable names must be non-empty without "=" or NUL, got ${JSON.stringify(key)}`);
    noNul(`env ${key}`, value);
  }
}

/** NUL ends a C string: what follows it would be dropped silently on its way to the process. */
function noNul(what: string, text: string): void {
  if (text.includes("\0")) throw new RunnerError("invalid_argument", `${what} must not contain NUL`);
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
