import { Gauge, Registry, collectDefaultMetrics } from "prom-client";

/**
 * prom-client's default metrics that `promtool check metrics` refuses: gauges named like counters
 * (`_total`). Each is the sum over the `type` label of the gauge of the same name without the
 * suffix (`nodejs_active_handles`), which the registry keeps, so nothing is lost.
 */
const DEFAULT_METRICS_DROPPED = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/** Latency buckets for calls, in seconds: sub-millisecond writes up to multi-second closes. */
export const CALL_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * What every service exports at /metrics: Node's own figures and how many terminals it holds,
 * under the service's name prefix. Services add their own metrics to `registry`.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private terminalsOpen: () => number = () => 0;

  constructor(prefix: string, terminalsHelp: string) {
    const open = (): number => this.terminalsOpen();
    new Gauge({ name: `${prefix}terminals_open`, help: terminalsHelp, registers: [this.registry], collect() { this.set(open()); } });
    collectDefaultMetrics({ register: this.registry, prefix });
    for (const name of DEFAULT_METRICS_DROPPED) this.registry.removeSingleMetric(`${prefix}${name}`);
  }

  /** Where the open-terminals gauge reads its value. */
  countTerminalsWith(count: () => number): void {
    this.terminalsOpen = count;
  }
}
