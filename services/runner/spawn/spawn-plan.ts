import { accessSync, constants, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import type { Account } from "./accounts.js";
import { RunnerError } from "../runner-error.js";
import { enterProblem, EXECUTE, permits, untrustedShellProblem, type Identity } from "./file-access.js";
import { shellInjectionFor } from "../shell/shell-injection.js";
import { hasTerminfo } from "./terminfo.js";
import { withoutServiceTunables } from "../../../lib/service-node-options.js";

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
  /** The account to run as (already looked up and allowed); undefined: the runner's own. */
  account?: Account;
  /** Check `shell` as a client-named shell must be checked (see untrustedShellProblem). */
  checkShell?: boolean;
  /** The caller's terminal type (its TERM), used under a pty when this host describes it; empty or absent: the runner's. */
  term?: string;
}

/** What the runner's own process contributes: its environment, working directory, and where its shell-integration scripts are. */
export interface RunnerHost {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** A directory holding the shell-integration scripts that every account may read (default: beside the sources). */
  shellScripts?: string;
  /** Who the runner runs as, for the checks of a client-named shell (default: read from the process). */
  identity?: Identity;
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
  /** The account the process is started as; undefined: the runner's own. */
  runAs?: { name: string; uid: number; gid: number };
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
const SERVICE_SECRETS = new Set(["RUNNER_TOKEN", "GATEWAY_TOKEN", "RUNNER_TOKEN_FILE", "GATEWAY_TOKEN_FILE"]);
/** TERM on pipes: no cursor addressing, no colours. */
const PIPES_TERM = "dumb";
/** PATH of a process started as another account: the system's own directories (the runner's PATH is the runner's business). */
const ACCOUNT_PATH = "/usr/local/bin:/usr/bin:/bin";
/** What a process started as another account takes from the runner's environment: how to show text and time, nothing more. */
const ACCOUNT_INHERITS = /^(LANG|LANGUAGE|TZ|LC_[A-Z_]+)$/;

/**
 * Decides what to exec for a spawn: `argv` as given, `command` through the shell's `-c`, or the
 * shell itself. A missing directory or program is not an error here: the plan carries the reason,
 * which the terminal writes into its own output before exiting 127 (126 when not executable).
 */
export function planSpawn(options: SpawnOptions, host: RunnerHost): SpawnPlan {
  if (options.cwd && !isAbsolute(options.cwd)) {
    throw new RunnerError("invalid_argument", `cwd must be an absolute path, got "${options.cwd}"`);
  }
  const { account } = options;
  const cwd = options.cwd || (account ? account.home : host.cwd);
  const env = terminalEnv(options, host);
  const shell = options.shell || (account ? account.shell || DEFAULT_SHELL : host.env.SHELL || DEFAULT_SHELL);
  const who: Identity | undefined = account ?? (options.checkShell ? (host.identity ?? { uid: process.getuid!(), groups: process.getgroups!() }) : undefined);
  if (options.checkShell && options.shell) {
    if (!isAbsolute(options.shell)) throw new RunnerError("invalid_argument", `a shell to check must be an absolute path, got "${options.shell}"`);
    const problem = untrustedShellProblem(options.shell, who!);
    if (problem) throw new RunnerError("failed_precondition", `refusing the shell: ${problem}`);
  }
  const interactive = options.argv.length === 0 && !options.command;
  const injection = interactive && options.isPty ? shellInjectionFor(shell, env, host.shellScripts) : undefined;
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
  if (account) plan.runAs = { name: account.name, uid: account.uid, gid: account.gid };
  const cwdProblem = directoryProblem(cwd, account);
  if (cwdProblem) return { ...plan, failure: { message: `cannot start in ${cwd}: ${cwdProblem}`, exitCode: 127 } };
  const found = findProgram(file!, cwd, env.PATH ?? "", account);
  if ("problem" in found) return { ...plan, failure: { message: `cannot run ${file}: ${found.problem}`, exitCode: found.exitCode } };
  return plan;
}

function terminalEnv(options: SpawnOptions, host: RunnerHost): Record<string, string> {
  const env: Record<string, string> = {};
  const { account } = options;
  for (const [key, value] of Object.entries(host.env)) {
    if (value !== undefined && !SERVICE_SECRETS.has(key) && (!account || ACCOUNT_INHERITS.test(key))) env[key] = value;
  }
  // The runner's own malloc tunables (lib/service-node-options.ts) are the runner's business, not its terminals'.
  const tunables = withoutServiceTunables(env.GLIBC_TUNABLES);
  if (tunables === undefined) delete env.GLIBC_TUNABLES;
  else env.GLIBC_TUNABLES = tunables;
  if (account) Object.assign(env, { HOME: account.home, USER: account.name, LOGNAME: account.name, SHELL: account.shell || DEFAULT_SHELL, PATH: ACCOUNT_PATH });
  Object.assign(env, options.env);
  const ownTerm = host.env.TERM && host.env.TERM !== PIPES_TERM ? host.env.TERM : DEFAULT_PTY_TERM;
  // A type the programs could not look up would leave them unable to draw: the runner's own is used then.
  const callerTerm = options.term && hasTerminfo(options.term, env) ? options.term : undefined;
  env.TERM = options.isPty ? (callerTerm ?? ownTerm) : PIPES_TERM;
  env.COLUMNS = String(options.cols);
  env.LINES = String(options.rows);
  return env;
}

function directoryProblem(path: string, who: Identity | undefined): string | undefined {
  try {
    if (!statSync(path).isDirectory()) return "not a directory";
    if (who) return enterProblem(path, who);
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (err) {
    return describeFsError(err);
  }
}

type FoundProgram = { path: string } | { problem: string; exitCode: number };

function findProgram(file: string, cwd: string, pathVariable: string, who: Identity | undefined): FoundProgram {
  if (file.includes("/")) return checkExecutable(resolve(cwd, file), who);
  let lastProblem: FoundProgram = { problem: "command not found", exitCode: 127 };
  for (const dir of pathVariable.split(":")) {
    const candidate = checkExecutable(join(resolve(cwd, dir || "."), file), who);
    if ("path" in candidate) return candidate;
    if (candidate.exitCode === 126) lastProblem = candidate;
  }
  return lastProblem;
}

function checkExecutable(path: string, who: Identity | undefined): FoundProgram {
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) return { problem: "is a directory", exitCode: 126 };
    if (who) return permits(stat, who, EXECUTE) && !enterProblem(dirname(path), who) ? { path } : { problem: "permission denied", exitCode: 126 };
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
