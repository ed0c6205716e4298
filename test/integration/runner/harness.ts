import { readdirSync, readFileSync } from "node:fs";
import type { TlsOptions } from "node:tls";
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
export { eventually } from "../../support/eventually.js";
import { useStarted } from "../../support/use-started.js";
import { TerminalService, type AttachResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { createLogger, type Logger } from "../../../lib/logger.js";
import { startRunner } from "../../../services/runner/start-runner.js";
import type { RunnerMetrics } from "../../../services/runner/metrics.js";
import type { RunAsOptions } from "../../../services/runner/spawn/run-as.js";
import type { RunnerServer } from "../../../services/runner/rpc/server.js";
import type { TerminalRegistry } from "../../../services/runner/terminal/terminal-registry.js";
import type { WatchLimits } from "../../../services/runner/terminal/change-journal.js";

/** A real runner on port 0 in this process, with real ptys, and clients for both protocols. */
export interface TestRunner {
  server: RunnerServer;
  registry: TerminalRegistry;
  token: string;
  grpc: Client<typeof TerminalService>;
  connect: Client<typeof TerminalService>;
  clientFor(transport: (baseUrl: string, interceptors: Interceptor[]) => Transport): Client<typeof TerminalService>;
  close(): Promise<void>;
}

/** Environment for test shells: no user rc files, a predictable prompt. */
export const QUIET_SHELL_ENV = { HOME: "/tmp", PS1: "$ ", BASH_ENV: "", ENV: "" };

/** What a test runner may differ in from the defaults: retention, heartbeats, reflection's token, TLS, its run-as policy, its limits and its metrics. */
export interface TestRunnerOptions {
  retainBytes?: number;
  heartbeatMs?: number;
  env?: NodeJS.ProcessEnv;
  openReflection?: boolean;
  tls?: TlsOptions;
  runAs?: RunAsOptions;
  maxMessageBytes?: number;
  maxConnections?: number;
  maxConnectionsPerAddress?: number;
  handshakeTimeoutMs?: number;
  idleTimeoutMs?: number;
  /** Where the runner logs (default: nowhere). */
  log?: Logger;
  /** The change journal's bounds for Watch (default: the runner's). */
  watch?: WatchLimits;
  /** Where the runner counts (default: nowhere). */
  metrics?: RunnerMetrics;
  /** How much nicer than the runner terminals run (default: the runner's default). */
  processNice?: number;
}

/** Starts a runner with a token, as production does. */
export async function startTestRunner(options: TestRunnerOptions = {}): Promise<TestRunner> {
  const token = "test-token";
  const { server, registry, close } = await startRunner({
    host: "127.0.0.1",
    port: 0,
    token,
    openReflection: options.openReflection,
    tls: options.tls,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    retainBytes: options.retainBytes ?? 1 << 20,
    retainTotalBytes: 1 << 30,
    maxTerminals: 100,
    closeGraceMs: 1_000,
    runAs: options.runAs,
    maxMessageBytes: options.maxMessageBytes,
    maxConnections: options.maxConnections,
    maxConnectionsPerAddress: options.maxConnectionsPerAddress,
    handshakeTimeoutMs: options.handshakeTimeoutMs,
    idleTimeoutMs: options.idleTimeoutMs,
    env: options.env ?? process.env,
    cwd: process.cwd(),
    log: options.log ?? createLogger("silent", "runner"),
    watch: options.watch,
    metrics: options.metrics,
    processNice: options.processNice,
  });
  const auth: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
  const clientFor = (make: (baseUrl: string, interceptors: Interceptor[]) => Transport) =>
    createClient(TerminalService, make(server.url, [auth]));
  return {
    server,
    registry,
    token,
    clientFor,
    grpc: clientFor((baseUrl, interceptors) => createGrpcTransport({ baseUrl, interceptors })),
    connect: clientFor((baseUrl, interceptors) => createConnectTransport({ baseUrl, interceptors, httpVersion: "2" })),
    close,
  };
}

/**
 * A test runner for the tests around the call (the file, or the `describe` it is called in): started
 * before them, closed after them. `options` may be a function, called when the runner starts.
 */
export function useTestRunner(options: TestRunnerOptions | (() => TestRunnerOptions) = {}): TestRunner {
  return useStarted("the test runner", () => startTestRunner(typeof options === "function" ? options() : options), (runner) => runner.close());
}

/** How long a held flood is watched for reading on: a process that was not held (`yes`) would write megabytes in it. */
export const HELD_FLOOD_WATCH_MS = 300;

/** A terminal's end offset: how much of its output the runner has read. */
export async function endOffsetOf(client: Client<typeof TerminalService>, id: string): Promise<number> {
  return Number((await client.get({ id })).terminal!.endOffset);
}

/** Attach streams and follows open now in a runner counting into `metrics`. */
export async function subscribersIn(metrics: RunnerMetrics): Promise<number> {
  return (await metrics.subscribers.get()).values[0]?.value ?? 0;
}

/** Everything one Attach stream delivered until it ended. */
export interface Collected {
  events: AttachResponse[];
  output: Buffer;
  exit?: { exitCode?: number; signal: string };
}

/** Reads an Attach stream to its end (or until `until`, given the output so far, says stop) and joins its output bytes. */
export async function collect(
  stream: AsyncIterable<AttachResponse>,
  until?: (chunks: readonly Buffer[], totalBytes: number) => boolean,
): Promise<Collected> {
  const events: AttachResponse[] = [];
  const chunks: Buffer[] = [];
  let totalBytes = 0;
  let exit: Collected["exit"];
  for await (const event of stream) {
    events.push(event);
    if (event.event.case === "output") {
      chunks.push(Buffer.from(event.event.value.data));
      totalBytes += event.event.value.data.length;
    }
    if (event.event.case === "exited") exit = event.event.value;
    if (until?.(chunks, totalBytes)) break;
  }
  return { events, output: Buffer.concat(chunks), exit };
}

/** Attaches from the start and reads until the process exits. */
export function runToExit(client: Client<typeof TerminalService>, id: string): Promise<Collected> {
  return collect(client.attach({ id, follow: true }));
}

/** Attaches and reads until the output matches `pattern` (the stream is then cancelled). */
export async function waitForOutput(client: Client<typeof TerminalService>, id: string, pattern: RegExp): Promise<string> {
  const { output } = await collect(client.attach({ id, follow: true }), (chunks) => pattern.test(Buffer.concat(chunks).toString()));
  const text = output.toString();
  if (!pattern.test(text)) throw new Error(`stream ended before ${pattern}: ${JSON.stringify(text.slice(-300))}`);
  return text;
}

/** Pids of the processes in a process group, read from /proc; zombies only with `includeZombies`. */
export function processGroupMembers(pgid: number, includeZombies = true): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && (includeZombies || fields[0] !== "Z")) members.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return members;
}
