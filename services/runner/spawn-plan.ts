import { accessSync, constants, statSync } from "node:fs";
import { basename, isAbsolute, join, resolve } from "node:path";
import { RunnerError } from "./errors.js";
import { shellInjectionFor } from "./shell-injection.js";

/** What a caller asked to run, already checked for shape (see spawn-request.ts). */
export interface SpawnOptions {
  argv: string[];
  command: string;
  shell: string;
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  isPty: boolean;
  title: string;
}

/** What the runner's own process contributes: its environment and working directory. */
export interface RunnerHost {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** A process ready to start, or the reason it cannot, in the words and exit code a shell would use. */
export interface SpawnPlan {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  title: string;
  /** True when the shell was started with integration that reports its commands. */
  commandDetection: boolean;
  failure?: { message: string; exitCode: number };
}

/** The fallback when neither the request nor the runner's environment names a shell. */
const DEFAULT_SHELL = "/bin/sh";
/** TERM under a pty when the runner has none of its own: what xterm.js and most clients emulate. */
const DEFAULT_PTY_TERM = "xterm-256color";
/**
 * The services' own secrets: a terminal inherits the runner's environment, and a shell that could
 * read the runner's token could drive the runner directly, past every check of the gateway.
 */
const SERVICE_SECRETS = new Set(["RUNNER_TOKEN", "GATEWAY_TOKEN"]);
/** TERM on pipes: no cursor addressing, no colours. */
const PIPES_TERM = "dumb";

/**
 * Decides what to exec for a spawn: `argv` as given, `command` through the shell's `-c`, or the
 * shell itself. A missing directory or program is not an error here: the plan carries the reason,
 * which the terminal writes into its own output before exiting 127 (126 when not executable).
 */
export function planSpawn(options: SpawnOptions, host: RunnerHost): SpawnPlan {
  if (options.cwd && !isAbsolute(options.cwd)) {
    throw new RunnerError("invalid_argument", `cwd must be an absolute path, got "${options.cwd}"`);
  }
  const cwd = options.cwd || host.cwd;
  const env = terminalEnv(options, host);
  const shell = options.shell || host.env.SHELL || DEFAULT_SHELL;
  const interactive = options.argv.length === 0 && !options.command;
  const injection = interactive && options.isPty ? shellInjectionFor(shell, env) : undefined;
  Object.assign(env, injection?.env);
  const [file, ...args] = options.argv.length
    ? options.argv
    : options.command
      ? [shell, "-c", options.command]
      : options.isPty
        ? [shell, ...(injection?.args ?? [])]
        : [shell, "-i"];
  const title = options.title || basename(file!);
  const plan: SpawnPlan = { file: file!, args, cwd, env, title, commandDetection: injection !== undefined };
  const cwdProblem = directoryProblem(cwd);
  if (cwdProblem) return { ...plan, failure: { message: `cannot start in ${cwd}: ${cwdProblem}`, exitCode: 127 } };
  const found = findProgram(file!, cwd, env.PATH ?? "");
  if ("problem" in found) return { ...plan, failure: { message: `cannot run ${file}: ${found.problem}`, exitCode: found.exitCode } };
  return plan;
}

function terminalEnv(options: SpawnOptions, host: RunnerHost): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(host.env)) if (value !== undefined && !SERVICE_SECRETS.has(key)) env[key] = value;
  Object.assign(env, options.env);
  const ownTerm = host.env.TERM && host.env.TERM !== PIPES_TERM ? host.env.TERM : DEFAULT_PTY_TERM;
  env.TERM = options.isPty ? ownTerm : PIPES_TERM;
  env.COLUMNS = String(options.cols);
  env.LINES = String(options.rows);
  return env;
}

function directoryProblem(path: string): string | undefined {
  try {
    if (!statSync(path).isDirectory()) return "not a directory";
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (err) {
    return describeFsError(err);
  }
}

type FoundProgram = { path: string } | { problem: string; exitCode: number };

function findProgram(file: string, cwd: string, pathVariable: string): FoundProgram {
  if (file.includes("/")) return checkExecutable(resolve(cwd, file));
  let lastProblem: FoundProgram = { problem: "command not found", exitCode: 127 };
  for (const dir of pathVariable.split(":")) {
    const candidate = checkExecutable(join(resolve(cwd, dir || "."), file));
    if ("path" in candidate) return candidate;
    if (candidate.exitCode === 126) lastProblem = candidate;
  }
  return lastProblem;
}

function checkExecutable(path: string): FoundProgram {
  try {
    if (statSync(path).isDirectory()) return { problem: "is a directory", exitCode: 126 };
    accessSync(path, constants.X_OK);
    return { path };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: describeFsError(err), exitCode: code === "EACCES" ? 126 : 127 };
  }
}

function describeFsError(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return "no such file or directory";
    case "ENOTDIR":
      return "not a directory";
    case "EACCES":
      return "permission denied";
    default:
      return (err as Error).message;
  }
}
