import { Counter, Gauge, Histogram } from "prom-client";
import type { LogCounters } from "./log/output-log.js";
import { CALL_SECONDS_BUCKETS, ServiceMetrics } from "../../lib/service-metrics.js";

/** What the runner counts, exported at /metrics. */
export class RunnerMetrics extends ServiceMetrics {
  readonly spawns = new Counter({ name: "runner_spawns_total", help: "Terminals spawned, by mode and whether the process started", labelNames: ["mode", "outcome"], registers: [this.registry] });
  readonly exits = new Counter({ name: "runner_exits_total", help: "Processes that exited, by exit code (or signal name)", labelNames: ["code"], registers: [this.registry] });
  readonly outputBytes = new Counter({ name: "runner_output_bytes_total", help: "Output bytes read from processes", registers: [this.registry] });
  readonly inputBytes = new Counter({ name: "runner_input_bytes_total", help: "Input bytes written to processes (Write and WriteStream)", registers: [this.registry] });
  readonly evictedBytes = new Counter({ name: "runner_evicted_bytes_total", help: "Retained output bytes evicted to stay within retention", registers: [this.registry] });
  readonly subscribers = new Gauge({ name: "runner_attach_subscribers", help: "Attach streams and Follow follows open now", registers: [this.registry] });
  readonly rpcs = new Counter({ name: "runner_rpc_requests_total", help: "RPCs answered, by method and gRPC code name (OK, NOT_FOUND, ...)", labelNames: ["method", "code"], registers: [this.registry] });
  readonly rpcSeconds = new Histogram({ name: "runner_rpc_duration_seconds", help: "Time to answer unary RPCs", labelNames: ["method"], buckets: CALL_SECONDS_BUCKETS, registers: [this.registry] });

  constructor() {
    super("runner_", "Terminals held (running or exited, not yet closed)");
  }

  /** The counters an output log feeds. */
  logCounters(): LogCounters {
    return { output: (bytes) => this.outputBytes.inc(bytes), evicted: (bytes) => this.evictedBytes.inc(bytes) };
  }
}
