import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { resolve } from "node:path";

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

/** Starts `entry` (a .ts file under the repository) with tsx and resolves once it has printed its first line. */
export function startServiceProcess(entry: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServiceProcess> {
  return startProcess(process.execPath, ["--import", "tsx", entry, ...args], env, entry);
}

/** Starts any command from the repository root (a compiled service under a shell's `ulimit`, say) and resolves once it has printed its first line. */
export async function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv = {}, name = command): Promise<ServiceProcess> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
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

/** Runs `entry` to completion (for flags that make it exit) and returns its exit code and output. */
export function runServiceToExit(entry: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", entry, ...args], { cwd: ROOT });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data) => (stdout += data));
    child.stderr.on("data", (data) => (stderr += data));
    child.on("exit", (code) => done({ code, stdout, stderr }));
  });
}
