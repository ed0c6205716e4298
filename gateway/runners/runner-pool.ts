import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Logger } from "../../lib/logger.js";
import { HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import type { Runner } from "./runner-client.js";

/** Looks a host name up: every address it has. */
export type Resolver = (name: string) => Promise<{ address: string; family: number }[]>;

/** What a pool needs: how to reach a runner at a URL, a logger, and (for tests) how names are looked up. */
export interface RunnerPoolOptions {
  connect(url: string): Runner;
  log: Logger;
  resolve?: Resolver;
}

/** How often a runner name that resolves to several addresses is looked up again for new runners. */
const RESOLVE_INTERVAL_MS = 30_000;

/**
 * The runners a gateway places terminals on. Each `--runner` URL is one runner, unless its host
 * name resolves to several addresses (a Kubernetes headless Service): then every address is a
 * runner, and the name is looked up again periodically so runners that appear are picked up.
 */
export class RunnerPool {
  private readonly runners = new Map<string, Runner>();
  private readonly added = new Set<(runner: Runner) => void>();

  private readonly log: Logger;
  private readonly resolve: Resolver;

  private constructor(
    private readonly urls: readonly string[],
    private readonly connect: (url: string) => Runner,
    options: RunnerPoolOptions,
  ) {
    this.log = options.log;
    this.resolve = options.resolve ?? ((name) => lookup(name, { all: true }));
  }

  /** A pool of the runners the URLs name now (a name with several addresses becomes one runner per address). */
  static async create(urls: readonly string[], options: RunnerPoolOptions): Promise<RunnerPool> {
    const pool = new RunnerPool(urls, options.connect, options);
    await pool.refresh();
    return pool;
  }

  /** Every runner known now. */
  list(): Runner[] {
    return [...this.runners.values()];
  }

  /** Calls `listener` for each runner discovered from now on. */
  onAdded(listener: (runner: Runner) => void): void {
    this.added.add(listener);
  }

  /** True when at least one runner answers its health check as serving within `timeoutMs`. */
  async ready(timeoutMs: number): Promise<boolean> {
    const checks = this.list().map((runner) =>
      runner.health.check({}, { timeoutMs }).then(
        (response) => response.status === HealthCheckResponse_ServingStatus.SERVING,
        () => false,
      ),
    );
    return (await Promise.all(checks)).some(Boolean);
  }

  /** Looks names up again every RESOLVE_INTERVAL_MS until `signal` aborts, adding runners that appeared. */
  keepDiscovering(signal: AbortSignal): void {
    const timer = setInterval(() => void this.refresh(), RESOLVE_INTERVAL_MS);
    timer.unref();
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  }

  /** Looks the names up again now, adding runners that appeared. */
  async refresh(): Promise<void> {
    for (const url of this.urls) {
      const parsed = new URL(url);
      let addresses: { address: string; family: number }[] = [];
      if (!isIP(parsed.hostname.replace(/^\[|\]$/g, ""))) {
        try {
          addresses = await this.resolve(parsed.hostname);
        } catch (err) {
          this.log.warn({ runner: url, err: (err as Error).message }, "cannot resolve the runner's name; using it as given");
        }
      }
      if (addresses.length < 2) {
        this.add(url);
        continue;
      }
      for (const { address, family } of addresses) {
        const each = new URL(url);
        each.hostname = family === 6 ? `[${address}]` : address;
        this.add(each.toString().replace(/\/$/, ""));
      }
    }
  }

  private add(url: string): void {
    if (this.runners.has(url)) return;
    const runner = this.connect(url);
    this.runners.set(url, runner);
    this.log.info({ runner: url }, "runner added");
    for (const listener of this.added) listener(runner);
  }
}
