import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { resolve } from "node:path";
import { nodeOptionsFor, withServiceTunables } from "../../lib/service-node-options.js";

/** The repository root: e2e tests start the product from it exactly as `npm run runner` / `npm run gateway` would. */
export const ROOT = resolve(import.meta.dirname, "../..");

/** A service started as its own process. */
export interface ServiceProcess {
  child: ChildProcess;
  /** The first line it printed on stdout (its address). */
  firstLine: string;
  /** Lines of stdout after the first. */
  stdoutLines: string[];
  /** Lines of stderr so far. */
  stderrLines: string[];
  /** Sends a signal and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** How a service is started: from its sources through tsx (default), or compiled, as npm start's launcher runs it. */
export interface StartOptions {
  compiled?: boolean;
  /**
   * A descriptor number the service inherits open and without close-on-exec (the write end of a
   * pipe), as a shell or supervisor may leave one. Node marks the lowest few close-on-exec as it
   * starts, so numbers above 20 stay as given.
   */
  inheritedFd?: number;
  /** A command that execs node in a changed setting (`["prlimit", "--nofile=128:128"]`). */
  launcher?: string[];
}

/**
 * Starts `entry` (a .ts file under the repository) and resolves once it has printed its first line:
 * through tsx, or (`compiled`) its build in dist/app with the node options and malloc tunables the launcher gives it;
 * through `launcher` when given.
 */
export async function startServiceProcess(entry: string, args: string[], env: NodeJS.ProcessEnv = {}, options: StartOptions = {}): Promise<ServiceProcess> {
  const name = entry.replace(/\.ts$/, "");
  const program = options.compiled ? [...nodeOptionsFor(name), `dist/app/${name}.js`] : ["--import", "tsx", entry];
  const command = [...(options.launcher ?? []), process.execPath, ...program, ...args];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: options.compiled ? withServiceTunables({ ...process.env, ...env }) : { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe", ...Array<"ignore">(Math.max(0, (options.inheritedFd ?? 2) - 3)).fill("ignore"), ...(options.inheritedFd ? ["pipe" as const] : [])],
  });
  const stdoutLines: string[] = [];
  const stderrLines: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => stderrLines.push(line));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const firstLine = await new Promise<string>((done, fail) => {
    let first = true;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (first) done(line);
      else stdoutLines.push(line);
      first = false;
    });
    child.once("exit", (code) => fail(new Error(`${name} exited with ${code} before printing its address: ${stderrLines.join("\n")}`)));
  });
  return {
    child,
    firstLine,
    stdoutLines,
    stderrLines,
    stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `entry` to completion (for flags that make it exit, or a start that fails) and returns its exit code and output. */
export function runServiceToExit(entry: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", entry, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data) => (stdout += data));
    child.stderr.on("data", (data) => (stderr += data));
    child.on("exit", (code) => done({ code, stdout, stderr }));
  });
}
