import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import WebSocket from "ws";
import { AhpClient } from "../ahp/ahp-client.js";
import type { Client } from "@connectrpc/connect";
import type { TerminalService } from "../gen/terminal/v1/terminal_pb.js";
import { nodeOptionsFor, withServiceTunables } from "../lib/service-node-options.js";
import { benchRunnerClient } from "./runner-client.js";
import { createScratchHome } from "./scratch-home.js";

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, "..");

/** One service process of the product, as users run it. */
export interface Service {
  child: ChildProcess;
  address: string;
  stop(): Promise<void>;
}

/** Starts `entry` (a source path such as "gateway/main.ts") compiled, and resolves once it printed its address. */
export async function startService(entry: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Service> {
  const profile = profileArgs(basename(dirname(entry)));
  // The compiled build, as `npm start` runs it (`npm run bench` builds first); BENCH_DIST=DIR runs
  // another build's dist/app instead, so two builds can be compared with the same bench scripts.
  const compiled = join(process.env.BENCH_DIST ?? join(ROOT, "dist", "app"), entry.replace(/\.ts$/, ".js"));
  // With the node options users get (lib/service-node-options.ts); BENCH_NODE_DEFAULTS=1 leaves them out, to measure what they buy.
  const nodeOptions = process.env.BENCH_NODE_DEFAULTS ? [] : nodeOptionsFor(entry.replace(/\.ts$/, ""));
  // With the malloc tunables users get too (BENCH_NODE_DEFAULTS leaves those out as well).
  const serviceEnv = process.env.BENCH_NODE_DEFAULTS ? env : withServiceTunables({ ...process.env, ...env });
  return startNode([...nodeOptions, ...extraNodeArgs(basename(dirname(entry))), ...profile, compiled, ...args], serviceEnv);
}

/**
 * Node flags added for one service, from BENCH_RUNNER_NODE_ARGS or BENCH_GATEWAY_NODE_ARGS
 * (space-separated), to try an option before it goes in lib/service-node-options.ts.
 */
function extraNodeArgs(service: string): string[] {
  return (process.env[`BENCH_${service.toUpperCase()}_NODE_ARGS`] ?? "").split(" ").filter((arg) => arg !== "");
}

/**
 * Node flags that make a process write its CPU profile into BENCH_PROF=DIR when set (for
 * chrome://inspect or speedscope), named after `name` ("runner-…", "gateway-…", "wetty-…") so
 * bench/profile-summary.ts can tell them apart.
 */
export function profileArgs(name: string): string[] {
  return process.env.BENCH_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROF}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [];
}

/** Starts node with `args`, and resolves once the process printed its address (its first line). */
export async function startNode(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Service> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", process.env.BENCH_LOGS ? "inherit" : "ignore"] });
  const address = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout! }).once("line", done);
    child.once("exit", (code) => fail(new Error(`${args.join(" ")} exited with ${code}`)));
  });
  return {
    child,
    address,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once("exit", () => done());
        child.kill("SIGTERM");
      }),
  };
}

/** The HOME every bench shell runs with, the node-pty baselines' as well as the runner's terminals. */
export const BENCH_HOME = createScratchHome();

/** The script the runner starts bash with (services/runner/shell/shell-injection.ts), which sources ~/.bashrc: the baselines start bash with it too. */
export const BASH_INTEGRATION = join(ROOT, "services", "runner", "shell", "shell-scripts", "bash-integration.sh");

/** The environment bench shells get, in the runner and in the baselines alike: `/bin/sh` prompts with "$ ". */
export function shellEnv(shell = "/bin/sh"): NodeJS.ProcessEnv {
  return { ...process.env, SHELL: shell, HOME: BENCH_HOME, ENV: "", PS1: "$ ", TERM: "xterm-256color" };
}

/** The bearer token of every runner a bench starts. */
const BENCH_RUNNER_TOKEN = "bench-runner-token";

/** A compiled runner whose terminals run `shell` with a scratch HOME. */
export function startRunner(shell?: string, args: string[] = []): Promise<Service> {
  return startService("services/runner/main.ts", ["--port", "0", "--token", BENCH_RUNNER_TOKEN, "--max-terminals", "2000", ...args], shellEnv(shell));
}

/** A compiled gateway in front of `runners` (started by startRunner), on `port` (0 picks one). */
export function startGateway(runners: string[], args: string[] = [], port = 0): Promise<Service> {
  const runnerFlags = runners.flatMap((url) => ["--runner", url]);
  return startService("gateway/main.ts", ["--port", String(port), ...runnerFlags, "--log-level", "warn", ...args], { RUNNER_TOKEN: BENCH_RUNNER_TOKEN, HOME: BENCH_HOME });
}

/** Runner and gateway as two processes; terminals run `shell` with a scratch HOME. */
export async function startSystem(options: { shell?: string; runnerArgs?: string[]; gatewayArgs?: string[] } = {}): Promise<{ runner: Service; gateway: Service; stop(): Promise<void> }> {
  const runner = await startRunner(options.shell, options.runnerArgs);
  const gateway = await startGateway([runner.address], options.gatewayArgs);
  return { runner, gateway, stop: async () => (await gateway.stop(), await runner.stop()) };
}

/** A gRPC client for a runner started by startRunner or startSystem. */
export function runnerClient(url: string): Client<typeof TerminalService> {
  return benchRunnerClient(url, BENCH_RUNNER_TOKEN);
}

/** The protocol version bench clients speak. */
const BENCH_PROTOCOL_VERSION = "0.9.0";

/** A minimal AHP client for benchmarks: requests, dispatches, and a hook on every `action`. */
export class BenchClient {
  private readonly client: AhpClient;
  onAction: (envelope: any) => void = () => {};

  private constructor(readonly socket: WebSocket) {
    this.client = new AhpClient({ send: (text) => socket.send(text) }, { action: (envelope) => this.onAction(envelope) });
    socket.on("message", (data: Buffer) => this.client.receive(data.toString("utf8")));
    socket.on("close", () => this.client.disconnected(new Error("the gateway closed the connection")));
    // A reset connection (a gateway killed) emits "error" before "close"; "close" already tells the client.
    socket.on("error", () => {});
  }

  static async connect(url: string, clientId = `bench-${Math.random()}`): Promise<BenchClient> {
    const client = await BenchClient.open(url);
    await client.initialize(clientId);
    return client;
  }

  /** A socket to `url` before its handshake: `initialize` or `reconnect` next. */
  static async open(url: string): Promise<BenchClient> {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((done, fail) => socket.once("open", done).once("error", fail));
    return new BenchClient(socket);
  }

  /** `initialize`, answered with a snapshot of each of `initialSubscriptions` the gateway knows. */
  initialize(clientId: string, initialSubscriptions: string[] = []): Promise<any> {
    return this.client.initialize({ protocolVersions: [BENCH_PROTOCOL_VERSION], clientId, initialSubscriptions });
  }

  /** `reconnect` as a client that was served `lastSeenServerSeq` elsewhere does it. */
  reconnect(clientId: string, lastSeenServerSeq: number, subscriptions: string[]): Promise<any> {
    return this.client.reconnect({ clientId, lastSeenServerSeq, subscriptions });
  }

  /** The highest `serverSeq` this socket has seen. */
  get lastSeenServerSeq(): number {
    return this.client.lastSeenServerSeq;
  }

  call(method: string, params: unknown): Promise<any> {
    // A request on a socket that is already gone would never be answered.
    if (this.socket.readyState !== WebSocket.OPEN) return Promise.reject(new Error("the connection to the gateway is closed"));
    return this.client.call(method, params);
  }

  /** Creates a terminal at `channel` and subscribes to it. */
  async openTerminal(channel: string, params: Record<string, unknown> = {}): Promise<void> {
    await this.call("createTerminal", { channel, ...params });
    await this.call("subscribe", { channel });
  }

  /** Hands each `terminal/data` text of `channel` to `listener` (the one action hook: it replaces any other). */
  onData(channel: string, listener: (text: string) => void): void {
    this.onAction = (envelope) => {
      if (envelope.channel === channel && envelope.action.type === "terminal/data") listener(envelope.action.data);
    };
  }

  /** Dispatches `action` to `channel`; the `clientSeq` its echo carries. */
  dispatch(channel: string, action: Record<string, unknown>): number {
    return this.client.dispatch(channel, action);
  }

  input(channel: string, data: string): void {
    this.dispatch(channel, { type: "terminal/input", data });
  }

  close(): void {
    this.socket.close();
  }
}

/** The p-th percentile (0–100) of some numbers. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Timings in ms as reports print them: how many, p50, p99 and max (only the count when there are none). */
export function timings(values: number[]): { count: number; p50?: number; p99?: number; max?: number } {
  if (values.length === 0) return { count: 0 };
  return { count: values.length, p50: round(percentile(values, 50)), p99: round(percentile(values, 99)), max: round(Math.max(...values)) };
}

/** Rounds for printing. */
export const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;

/** Resident memory of a process, in bytes. */
export function rssOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
}

/**
 * CPU seconds a process's threads have run, from the scheduler's nanoseconds
 * (/proc/PID/task/TID/schedstat). /proc/PID/stat counts in 10 ms ticks, truncated: for a peer that
 * serves each terminal from a process of its own (sshd), each using a few ms in a window, the
 * truncation would be most of the figure. Threads that ended are not counted; the services'
 * threads live as long as they do.
 */
export function cpuSecondsOf(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended
    }
  }
  return ns / 1e9;
}

/** CPU milliseconds used by each named process while `work` runs. */
export async function cpuDuring<T>(pids: Record<string, number>, work: () => Promise<T>): Promise<{ result: T; cpuMs: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSecondsOf(pid)]));
  const result = await work();
  const cpuMs = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, (cpuSecondsOf(pid) - before[name]!) * 1000]));
  return { result, cpuMs };
}

/** Pids of every descendant of `pid`. */
export function descendantsOf(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)) {
      children.push(child, ...descendantsOf(child));
    }
  } catch {
    // gone
  }
  return children;
}

/** The machine the figures come from. */
export function machine(): { cpus: number; cpuModel: string; memoryGiB: number; node: string } {
  return { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown", memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
}

/** Prints one benchmark's result as one JSON line. */
export function report(result: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...result, machine: machine() })}\n`);
}

/** Waits. */
export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
