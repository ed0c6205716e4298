import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Latency buckets for JSON-RPC requests, in seconds. */
const REQUEST_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Why dispatched actions were refused, in a handful of kinds (the reasons themselves go to the client). */
export type RefusalKind = "not_dispatchable" | "malformed" | "no_terminal" | "not_allowed" | "invalid";

/** What the gateway counts, exported at /metrics. */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly connections = new Gauge({ name: "gateway_connections", help: "WebSocket connections open now", registers: [this.registry] });
  readonly requests = new Counter({ name: "gateway_jsonrpc_requests_total", help: "JSON-RPC requests answered, by method and outcome (ok or the error code)", labelNames: ["method", "outcome"], registers: [this.registry] });
  readonly requestSeconds = new Histogram({ name: "gateway_jsonrpc_request_duration_seconds", help: "Time to answer JSON-RPC requests", labelNames: ["method"], buckets: REQUEST_SECONDS_BUCKETS, registers: [this.registry] });
  readonly reconnects = new Counter({ name: "gateway_reconnects_total", help: "reconnect requests, by result (replay, snapshot, unknown_client)", labelNames: ["result"], registers: [this.registry] });
  readonly rejectedActions = new Counter({ name: "gateway_rejected_actions_total", help: "Dispatched actions refused, by kind of reason", labelNames: ["reason"], registers: [this.registry] });
  private terminalsOpen: () => number = () => 0;

  constructor() {
    const open = (): number => this.terminalsOpen();
    new Gauge({ name: "gateway_terminals_open", help: "Terminals the gateway serves", registers: [this.registry], collect() { this.set(open()); } });
    collectDefaultMetrics({ register: this.registry, prefix: "gateway_" });
  }

  /** Where the open-terminals gauge reads its value. */
  countTerminalsWith(count: () => number): void {
    this.terminalsOpen = count;
  }
}
