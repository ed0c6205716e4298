import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Backoff } from "../lib/backoff.js";
import type { Logger } from "../lib/logger.js";
import { CODE_ROOT, RUNS_COMPILED } from "../lib/package-root.js";
import { nodeOptionsFor, withServiceTunables } from "../lib/service-node-options.js";

/** Shortest pause before restarting a child that died: long enough that a child dying as it starts does not keep a core busy. */
const RESTART_MIN_DELAY_MS = 500;
/** Longest pause between restarts of a child that keeps dying: once its cause is gone it is back within seconds. */
const RESTART_MAX_DELAY_MS = 10_000;
/** A child that ran at least this long counts as healthy: its next restart starts from the shortest pause again. */
const HEALTHY_RUN_MS = 30_000;
/** How long a child gets after the stop signal before it is killed. */
const STOP_GRACE_MS = 10_000;

/** A child that exited before it printed its address: it said why on its stderr, which is the launcher's. */
export class ChildStartFailure extends Error {
  constructor(
    readonly child: string,
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {
    super(`the ${child} exited with ${signal ?? `code ${code}`} before it was ready`);
  }
}

/**
 * How to start a service's entry point (a path without extension, such as "gateway/main"): its
 * compiled JavaScript when the launcher itself runs compiled, else its TypeScript source through
 * tsx; with the service's node options either way.
 */
export function entryArgs(entry: string): string[] {
  const options = nodeOptionsFor(entry);
  return RUNS_COMPILED ? [...options, join(CODE_ROOT, `${entry}.js`)] : [...options, "--import", "tsx", join(CODE_ROOT, `${entry}.ts`)];
}

/**
 * One service process kept running: started like the launcher itself (compiled or through tsx),
 * restarted with backoff (and the restart logged) whenever it dies on its own, and stopped on
 * request by forwarding the signal.
 */
export class Supervised {
  private child: ChildProcess | undefined;
  private stopping = false;
  /** True once the first child printed its address; only then are deaths restarts. */
  private ready = false;
  /** Pauses grow with each quick death in a row. */
  private readonly restarts = new Backoff({ minMs: RESTART_MIN_DELAY_MS, maxMs: RESTART_MAX_DELAY_MS });
  private markStopped!: () => void;
  /** Resolves once `stop` was called and the process has exited. */
  readonly stopped = new Promise<void>((resolve) => (this.markStopped = resolve));

  constructor(
    private readonly name: string,
    private readonly entry: string,
    private readonly args: string[],
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: Logger,
  ) {}

  /** Starts the process and resolves with the first line it prints (its address). */
  start(): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = this.spawnChild();
      const lines = createInterface({ input: child.stdout! });
      lines.once("line", (line) => {
        child.off("exit", onEarlyExit);
        this.ready = true;
        resolve(line);
      });
      const onEarlyExit = (code: number | null, signal: NodeJS.Signals | null): void => reject(new ChildStartFailure(this.name, code, signal));
      child.once("exit", onEarlyExit);
    });
  }

  /** Forwards `signal`, kills the process if it lingers, and resolves once it is gone. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      this.markStopped();
      return this.stopped;
    }
    child.kill(signal);
    const killer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await this.stopped;
    clearTimeout(killer);
  }

  private spawnChild(): ChildProcess {
    const startedAt = Date.now();
    const child = spawn(process.execPath, [...entryArgs(this.entry), ...this.args], {
      env: withServiceTunables({ ...process.env, ...this.env }),
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.child = child;
    child.stdout!.resume();
    child.once("exit", (code, signal) => {
      // One that never got ready is start()'s failure to report, not a child to restart.
      if (this.stopping || !this.ready) return this.markStopped();
      if (Date.now() - startedAt >= HEALTHY_RUN_MS) this.restarts.reset();
      const pauseMs = this.restarts.next();
      this.log.warn({ child: this.name, code, signal, restartInMs: pauseMs }, "child stopped unexpectedly; restarting");
      setTimeout(() => {
        if (this.stopping) return this.markStopped();
        this.spawnChild();
        this.log.info({ child: this.name }, "child restarted");
      }, pauseMs);
    });
    return child;
  }
}
