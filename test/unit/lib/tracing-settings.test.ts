import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../lib/cli.js";
import { tracingSettingsFromEnv } from "../../../lib/tracing-settings.js";

describe("tracingSettingsFromEnv", () => {
  it("is off unless OTEL_TRACES_EXPORTER names otlp, whatever else is set", () => {
    expect(tracingSettingsFromEnv({}, "svc")).toBeUndefined();
    expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SERVICE_NAME: "x" }, "svc")).toBeUndefined();
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "none" }, "svc")).toBeUndefined();
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: " " }, "svc")).toBeUndefined();
  });

  it("exports over http/protobuf by default, as the OTLP specification says", () => {
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp" }, "svc")).toEqual({ protocol: "http/protobuf", serviceName: "svc" });
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "none, otlp" }, "svc")?.protocol).toBe("http/protobuf");
  });

  it("takes the traces-specific protocol over the general one", () => {
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, "svc")?.protocol).toBe("http/json");
    const env = { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf" };
    expect(tracingSettingsFromEnv(env, "svc")?.protocol).toBe("http/protobuf");
  });

  it("names the service from OTEL_SERVICE_NAME, else the default it is given", () => {
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_SERVICE_NAME: "edge-7" }, "svc")?.serviceName).toBe("edge-7");
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_SERVICE_NAME: "" }, "svc")?.serviceName).toBe("svc");
  });

  it("stays off when OTEL_SDK_DISABLED is true", () => {
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "TRUE" }, "svc")).toBeUndefined();
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "false" }, "svc")).toBeDefined();
  });

  it("refuses an exporter or a protocol it cannot serve, naming the variable", () => {
    expect(() => tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp,zipkin" }, "svc")).toThrow(new ConfigError('OTEL_TRACES_EXPORTER must be otlp or none, got "zipkin"'));
    expect(() => tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "svc")).toThrow(
      'OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json, got "grpc"',
    );
    expect(() => tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" }, "svc")).toThrow(/^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/);
  });
});
