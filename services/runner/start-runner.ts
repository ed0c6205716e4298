import type { TlsOptions } from "node:tls";
import type { Logger } from "../../lib/logger.js";
import {
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_SPAWNS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_MAX_QUEUED_SPAWNS,
  DEFAULT_PROCESS_NICE,
} from "./config.js";
import { ServingState } from "./rpc/health-service.js";
import type { RunnerMetrics } from "./metrics.js";
import { createProcessLauncher } from "./process/process-launcher.js";
import type { ProcessLauncher } from "./process/terminal-process.js";
import { publishShellScripts } from "./shell/published-scripts.js";
import { RetentionBudget } from "./log/retention-budget.js";
import { RunAsPolicy, type RunAsOptions } from "./spawn/run-as.js";
import { startRunnerServer, type RunnerServer } from "./rpc/server.js";
import { DescriptorLimit } from "./process/descriptor-limit.js";
import { SpawnGate } from "./spawn/spawn-gate.js";
import { TerminalRegistry } from "./terminal/terminal-registry.js";
import type { WatchLimits } from "./terminal/change-journal.js";

/** Everything a runner is built from: where it listens and how it checks callers, its limits, and the environment its terminals start from. */
export interface RunnerDeps {
  host: string;
  port: number;
  /** The bearer token every call must carry; undefined serves without authentication. */
  token: string | undefined;
  openReflection?: boolean;
  tls?: TlsOptions;
  heartbeatMs: number;
  retainBytes: number;
  retainTotalBytes: number;
  maxTerminals: number;
  /** Largest request message accepted (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** Spawns in progress at once, and waiting (defaults DEFAULT_MAX_CONCURRENT_SPAWNS and DEFAULT_MAX_QUEUED_SPAWNS). */
  maxConcurrentSpawns?: number;
  maxQueuedSpawns?: number;
  /** Connections held at once in total and per address, and their timeouts (defaults as their flags'). */
  maxConnections?: number;
  maxConnectionsPerAddress?: number;
  handshakeTimeoutMs?: number;
  idleTimeoutMs?: number;
  closeGraceMs: number;
  /** Whether `run_as` is honoured (default: not). */
  runAs?: RunAsOptions;
  /** The environment and working directory terminals start from. */
  env: NodeJS.ProcessEnv;
  cwd: string;
  log: Logger;
  metrics?: RunnerMetrics;
  /** How much nicer than the runner terminals' processes run (default DEFAULT_PROCESS_NICE: as the runner). */
  processNice?: number;
  /** How processes are started (default: node-pty and child_process). */
  launcher?: ProcessLauncher;
  /** How much of the past Watch keeps for resuming, and how far a watcher may lag (default DEFAULT_WATCH_LIMITS). */
  watch?: WatchLimits;
}

/** A serving runner and its parts. */
export interface Runner {
  server: RunnerServer;
  registry: TerminalRegistry;
  serving: ServingState;
  /** Health turns NOT_SERVING, every terminal is closed, then the server. */
  close(): Promise<void>;
}

/** Builds the runner from its parts and starts serving: the wiring `main.ts` and the tests share. */
export async function startRunner(deps: RunnerDeps): Promise<Runner> {
  const { log, metrics } = deps;
  const runAs = new RunAsPolicy(deps.runAs ?? { allowed: false, allowRoot: false });
  if (deps.runAs?.allowed && runAs.cannotSwitch) log.warn(`--allow-run-as: ${runAs.cannotSwitch}; run_as naming another account is refused`);
  // A shell started as another account reads its integration as that account.
  const scripts = deps.runAs?.allowed ? publishShellScripts() : undefined;
  const ownLauncher = deps.launcher ? undefined : createProcessLauncher(log, deps.processNice ?? DEFAULT_PROCESS_NICE);
  const registry = new TerminalRegistry({
    metrics,
    launcher: deps.launcher ?? ownLauncher!,
    host: { env: deps.env, cwd: deps.cwd, shellScripts: scripts?.directory },
    budget: new RetentionBudget(deps.retainTotalBytes),
    retainBytes: deps.retainBytes,
    maxTerminals: deps.maxTerminals,
    closeGraceMs: deps.closeGraceMs,
    runAs,
    watch: deps.watch,
  });
  metrics?.countTerminalsWith(() => registry.size);
  const serving = new ServingState();
  const spawnGate = new SpawnGate({
    maxConcurrent: deps.maxConcurrentSpawns ?? DEFAULT_MAX_CONCURRENT_SPAWNS,
    maxQueued: deps.maxQueuedSpawns ?? DEFAULT_MAX_QUEUED_SPAWNS,
  });
  const connections = {
    maxConnections: deps.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    maxConnectionsPerAddress: deps.maxConnectionsPerAddress ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    handshakeTimeoutMs: deps.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
    idleTimeoutMs: deps.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
  };
  const descriptors = new DescriptorLimit(log);
  const server = await startRunnerServer({ ...deps, descriptors, maxMessageBytes: deps.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, connections, registry, spawnGate, serving });
  return {
    server,
    registry,
    serving,
    async close() {
      serving.stopServing();
      await registry.closeAll();
      ownLauncher?.close();
      await server.close();
      scripts?.remove();
    },
  };
}
