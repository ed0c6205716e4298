import { ConfigError } from "./cli.js";

/** OTLP encodings over HTTP this build can export with (the OTLP gRPC exporter is not shipped). */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;

/** How traces are exported, read from the standard OpenTelemetry environment variables. */
export interface TracingSettings {
  protocol: (typeof OTLP_PROTOCOLS)[number];
  /** OTEL_SERVICE_NAME, else the process's own default name. */
  serviceName: string;
}

/**
 * The tracing the environment asks for, or undefined when it asks for none: tracing is on only when
 * OTEL_TRACES_EXPORTER names `otlp` (unlike the SDK's own default, so nothing is exported unasked),
 * and off when OTEL_SDK_DISABLED is true. Endpoint, headers, timeout, batching and sampler variables
 * are left to the SDK, which reads them itself. ConfigError for an exporter or protocol it cannot serve.
 */
export function tracingSettingsFromEnv(env: NodeJS.ProcessEnv, defaultServiceName: string): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "");
  const unknown = exporters.filter((name) => name !== "otlp" && name !== "none");
  if (unknown.length > 0) throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${unknown.join(",")}"`);
  if (!exporters.includes("otlp")) return undefined;
  const variable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = env[variable]?.trim() || "http/protobuf";
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new ConfigError(`${variable} must be one of ${OTLP_PROTOCOLS.join(", ")}, got "${protocol}"`);
  }
  return { protocol: protocol as TracingSettings["protocol"], serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultServiceName };
}
