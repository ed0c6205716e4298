import { Counter, Gauge, Histogram } from "prom-client";
import { CALL_SECONDS_BUCKETS, ServiceMetrics } from "../lib/service-metrics.js";

/** Why dispatched actions were refused, in a handful of kinds (the reasons themselves go to the client). */
export type RefusalKind = "not_dispatchable" | "malformed" | "no_terminal" | "not_allowed" | "invalid" | "conflict";

/** What the gateway counts, exported at /metrics. */
export class GatewayMetrics extends ServiceMetrics {
  readonly connections = new Gauge({ name: "gateway_connections", help: "WebSocket connections open now", registers: [this.registry] });
  readonly requests = new Counter({ name: "gateway_jsonrpc_requests_total", help: "JSON-RPC requests answered, by method and code (OK, or the error's name: INVALID_PARAMS, METHOD_NOT_FOUND, ...)", labelNames: ["method", "code"], registers: [this.registry] });
  readonly requestSeconds = new Histogram({ name: "gateway_jsonrpc_request_duration_seconds", help: "Time to answer JSON-RPC requests", labelNames: ["method"], buckets: CALL_SECONDS_BUCKETS, registers: [this.registry] });
  readonly reconnects = new Counter({ name: "gateway_reconnects_total", help: "reconnect requests, by result (replay, snapshot, unknown_client)", labelNames: ["result"], registers: [this.registry] });
  readonly rejectedActions = new Counter({ name: "gateway_rejected_actions_total", help: "Dispatched actions refused, by kind of reason", labelNames: ["reason"], registers: [this.registry] });

  private followed: () => number = () => 0;
  readonly followedTerminals: Gauge = new Gauge({
    name: "gateway_followed_terminals",
    help: "Terminals whose output this gateway follows now (someone reads them through it)",
    registers: [this.registry],
    collect: (): void => this.followedTerminals.set(this.followed()),
  });

  constructor() {
    super("gateway_", "Terminals the gateway serves");
  }

  /** Reads the number of followed terminals from `count` whenever metrics are collected. */
  countFollowedWith(count: () => number): void {
    this.followed = count;
  }
}
