import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { resolve } from "node:path";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";

/** The repository root: e2e tests start the product from it exactly as `npm run runner` would. */
export const ROOT = resolve(import.meta.dirname, "../..");

/** A runner started as its own process, as users run it. */
export interface RunnerProcess {
  child: ChildProcess;
  url: string;
  /** Lines of stdout after the URL. */
  stdoutLines: string[];
  /** Lines of stderr so far. */
  stderrLines: string[];
  /** A gRPC client that sends `token` (when given). */
  client(token?: string): Client<typeof TerminalService>;
  /** Sends a signal and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `services/runner/main.ts` with tsx and resolves once it has printed its URL. */
export async function startRunnerProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunnerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "services/runner/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdoutLines: string[] = [];
  const stderrLines: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => stderrLines.push(line));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let first = true;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (first) resolve(line);
      else stdoutLines.push(line);
      first = false;
    });
    child.once("exit", (code) => reject(new Error(`runner exited with ${code} before printing its URL: ${stderrLines.join("\n")}`)));
  });
  return {
    child,
    url,
    stdoutLines,
    stderrLines,
    client(token) {
      const auth: Interceptor = (next) => (request) => {
        if (token !== undefined) request.header.set("authorization", `Bearer ${token}`);
        return next(request);
      };
      return createClient(TerminalService, createGrpcTransport({ baseUrl: url, interceptors: [auth] }));
    },
    stop(signal = "SIGTERM") {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the runner to completion (for flags that make it exit) and returns its exit code and output. */
export function runRunnerToExit(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "services/runner/main.ts", ...args], { cwd: ROOT });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data) => (stdout += data));
    child.stderr.on("data", (data) => (stderr += data));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}
