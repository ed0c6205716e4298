import { setTimeout as delay } from "node:timers/promises";
import { diag, DiagLogLevel } from "@opentelemetry/api";
import type { Logger } from "./logger.js";
import { RateLimitedLog } from "./rate-limited-log.js";
import type { TracingSettings } from "./tracing-settings.js";

/** How long stopping may wait for the last spans to be exported: the exporter retries a collector that is down for longer, and the whole stop has 15 s. */
const SHUTDOWN_TIMEOUT_MS = 3_000;

/** A started tracing SDK. */
export interface Tracing {
  /** Exports the spans still buffered, then stops the exporter. */
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK as `settings` say and registers it globally (tracer provider, async
 * context, W3C trace-context propagation). The SDK is loaded here, on demand, so a process that
 * traces nothing never loads it. What the SDK reports (a collector it cannot reach) becomes a rate
 * limited warning in `log`.
 */
export async function startTracing(settings: TracingSettings, version: string, log: Logger): Promise<Tracing> {
  const [{ NodeTracerProvider, BatchSpanProcessor }, { W3CTraceContextPropagator }, resources, { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION }, exporter] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/core"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/semantic-conventions"),
    settings.protocol === "http/json" ? import("@opentelemetry/exporter-trace-otlp-http") : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  const warn = new RateLimitedLog(log).warning("tracing: the OpenTelemetry SDK reported a problem");
  diag.setLogger({ error: (message) => warn({ detail: message }), warn: (message) => warn({ detail: message }), info() {}, debug() {}, verbose() {} }, DiagLogLevel.WARN);
  // OTEL_RESOURCE_ATTRIBUTES (read by envDetector) adds to the defaults; the service name wins over both.
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    .merge(resources.resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: version }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new exporter.OTLPTraceExporter())] });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  log.info({ protocol: settings.protocol, serviceName: settings.serviceName }, "tracing: exporting spans over OTLP");
  return {
    // A collector that is down or slow costs the spans still held, never the graceful stop.
    async shutdown() {
      const timedOut = delay(SHUTDOWN_TIMEOUT_MS, "timed out", { ref: false });
      const outcome = await Promise.race([provider.shutdown().then(() => undefined, (err: unknown) => (err as Error).message), timedOut]);
      if (outcome !== undefined) log.warn({ err: outcome, timeoutMs: SHUTDOWN_TIMEOUT_MS }, "tracing: the last spans could not be exported");
    },
  };
}
