import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "../../../gateway/config.js";

describe("parseGatewayConfig", () => {
  it("has loopback defaults, a generated token, and the runner on its default port", () => {
    const config = parseGatewayConfig([], { HOME: "/home/me" }, "/srv");
    expect(config).toMatchObject({ host: "127.0.0.1", port: 7071, runnerUrls: ["http://127.0.0.1:7070"], scrollbackChars: 200000, defaultDirectory: "/home/me" });
    expect(config).toMatchObject({ noRunner: false, console: true, metricsPort: undefined, usersFile: undefined });
    expect(config.token).toMatch(/^[\w-]{32}$/);
    expect(config.runnerToken).toBeUndefined();
  });

  it("requires a runner at start only when told, and never together with --no-runner", () => {
    expect(parseGatewayConfig([], {}, "/").requireRunner).toBe(false);
    expect(parseGatewayConfig(["--require-runner"], {}, "/").requireRunner).toBe(true);
    expect(() => parseGatewayConfig(["--require-runner", "--no-runner"], {}, "/")).toThrow(/--require-runner and --no-runner contradict each other/);
  });

  it("reads tokens from flags over the environment", () => {
    expect(parseGatewayConfig(["--token", "a", "--runner-token", "b"], { GATEWAY_TOKEN: "x", RUNNER_TOKEN: "y" }, "/")).toMatchObject({ token: "a", runnerToken: "b" });
    expect(parseGatewayConfig([], { GATEWAY_TOKEN: "x", RUNNER_TOKEN: "y" }, "/")).toMatchObject({ token: "x", runnerToken: "y" });
  });

  it("reads tokens from files: the file flag, then the *_FILE variable, before the plain variable", () => {
    const dir = mkdtempSync(join(tmpdir(), "gateway-config-"));
    const gatewayFile = join(dir, "gateway-token");
    const runnerFile = join(dir, "runner-token");
    writeFileSync(gatewayFile, "gateway-secret\n", { mode: 0o600 });
    writeFileSync(runnerFile, "runner-secret\n", { mode: 0o600 });
    const env = { GATEWAY_TOKEN: "x", RUNNER_TOKEN: "y" };
    expect(parseGatewayConfig(["--token-file", gatewayFile, "--runner-token-file", runnerFile], env, "/")).toMatchObject({ token: "gateway-secret", runnerToken: "runner-secret", tokenWarnings: [] });
    expect(parseGatewayConfig([], { ...env, GATEWAY_TOKEN_FILE: gatewayFile, RUNNER_TOKEN_FILE: runnerFile }, "/")).toMatchObject({ token: "gateway-secret", runnerToken: "runner-secret" });
    chmodSync(runnerFile, 0o644);
    expect(parseGatewayConfig(["--runner-token-file", runnerFile], {}, "/").tokenWarnings).toEqual([expect.stringMatching(/--runner-token-file .* readable by its group or others/)]);
    expect(() => parseGatewayConfig(["--token", "a", "--token-file", gatewayFile], {}, "/")).toThrow(/give --token or --token-file, not both/);
    expect(() => parseGatewayConfig(["--token-file", join(dir, "missing")], {}, "/")).toThrow(/--token-file: cannot read/);
  });

  it("reads every other flag", () => {
    const config = parseGatewayConfig(
      [
        ...["--port", "0", "--runner", "http://10.0.0.2:9000/", "--runner", "http://10.0.0.3:9000", "--scrollback-chars", "5000"],
        ...["--default-directory", "/tmp", "--max-frame-bytes", "4096", "--log-level", "debug", "--metrics-port", "9100", "--users", "u.json", "--no-runner", "--no-console"],
      ],
      {},
      "/",
    );
    expect(config).toMatchObject({ port: 0, runnerUrls: ["http://10.0.0.2:9000", "http://10.0.0.3:9000"], scrollbackChars: 5000, defaultDirectory: "/tmp" });
    expect(config).toMatchObject({ maxFrameBytes: 4096, logLevel: "debug", metricsPort: 9100, usersFile: "u.json", noRunner: true, console: false });
  });

  it("has socket limits, a 4 MiB frame limit and no extra hosts or origins by default", () => {
    const config = parseGatewayConfig([], {}, "/");
    expect(config).toMatchObject({ maxFrameBytes: 4 * 1024 * 1024, allowedHosts: [], allowedOrigins: [] });
    expect(config.socketLimits).toEqual({ headersTimeoutMs: 5_000, initializeTimeoutMs: 10_000, pingIntervalMs: 30_000, pongTimeoutMs: 30_000, maxConnections: 1_024, maxConnectionsPerAddress: 128 });
  });

  it("reads the socket limits, and the allowed hosts and origins as lists that may repeat", () => {
    const config = parseGatewayConfig(
      [
        ...["--headers-timeout-ms", "2000", "--initialize-timeout-ms", "3000", "--ping-interval-ms", "4000", "--pong-timeout-ms", "5000"],
        ...["--max-connections", "10", "--max-connections-per-address", "2"],
        ...["--allowed-hosts", "A.example,.corp.example", "--allowed-hosts", "b.example", "--allowed-origins", "https://x.example:443, https://y.example:8443"],
      ],
      {},
      "/",
    );
    expect(config.socketLimits).toEqual({ headersTimeoutMs: 2000, initializeTimeoutMs: 3000, pingIntervalMs: 4000, pongTimeoutMs: 5000, maxConnections: 10, maxConnectionsPerAddress: 2 });
    expect(config.allowedHosts).toEqual(["a.example", ".corp.example", "b.example"]);
    expect(config.allowedOrigins).toEqual(["https://x.example", "https://y.example:8443"]);
    expect(parseGatewayConfig(["--allowed-hosts", "*", "--allowed-origins", "*"], {}, "/")).toMatchObject({ allowedHosts: ["*"], allowedOrigins: ["*"] });
  });

  it("refuses socket limits out of range, and host or origin entries it cannot match", () => {
    expect(() => parseGatewayConfig(["--headers-timeout-ms", "50"], {}, "/")).toThrow(/--headers-timeout-ms must be an integer from 100/);
    expect(() => parseGatewayConfig(["--pong-timeout-ms", "soon"], {}, "/")).toThrow(/--pong-timeout-ms/);
    expect(() => parseGatewayConfig(["--max-connections", "0"], {}, "/")).toThrow(/--max-connections must be an integer from 1/);
    expect(() => parseGatewayConfig(["--max-connections-per-address", "-1"], {}, "/")).toThrow(/--max-connections-per-address/);
    expect(() => parseGatewayConfig(["--allowed-hosts", "a.example:8080"], {}, "/")).toThrow(/--allowed-hosts: "a.example:8080" is not a host name/);
    expect(() => parseGatewayConfig(["--allowed-hosts", "https://a.example"], {}, "/")).toThrow(/--allowed-hosts/);
    expect(() => parseGatewayConfig(["--allowed-origins", "x.example"], {}, "/")).toThrow(/--allowed-origins: "x.example" is not an origin/);
    expect(() => parseGatewayConfig(["--allowed-origins", "https://x.example/app"], {}, "/")).toThrow(/--allowed-origins/);
  });

  it("reads TLS for its own port and for https runners, and refuses halves of a pair", () => {
    const config = parseGatewayConfig(
      ["--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-client-ca", "ca.pem", "--runner", "https://r:7070", "--runner-ca", "rca.pem", "--runner-cert", "rc.pem", "--runner-key", "rk.pem"],
      {},
      "/",
    );
    expect(config).toMatchObject({ tls: { cert: "c.pem", key: "k.pem", clientCa: "ca.pem" }, runnerTls: { ca: "rca.pem", cert: "rc.pem", key: "rk.pem" } });
    expect(parseGatewayConfig([], {}, "/")).toMatchObject({ tls: undefined, runnerTls: {} });
    expect(() => parseGatewayConfig(["--tls-cert", "c.pem"], {}, "/")).toThrow(/--tls-cert and --tls-key go together/);
    expect(() => parseGatewayConfig(["--tls-client-ca", "ca.pem"], {}, "/")).toThrow(/--tls-client-ca needs --tls-cert/);
    expect(() => parseGatewayConfig(["--runner", "https://r", "--runner-key", "k"], {}, "/")).toThrow(/--runner-cert and --runner-key go together/);
    expect(() => parseGatewayConfig(["--runner-ca", "ca.pem"], {}, "/")).toThrow(/for https:\/\/ runners, got "http:\/\/127.0.0.1:7070"/);
  });

  it("refuses bad values with a readable message", () => {
    expect(() => parseGatewayConfig(["--runner", "10.0.0.2:9000"], {}, "/")).toThrow(/--runner must be an http/);
    expect(() => parseGatewayConfig(["--default-directory", "relative"], {}, "/")).toThrow(/absolute/);
    expect(() => parseGatewayConfig(["--scrollback-chars", "10"], {}, "/")).toThrow(/--scrollback-chars/);
    expect(() => parseGatewayConfig(["--token", ""], {}, "/")).toThrow(/must not be empty/);
    expect(() => parseGatewayConfig(["--bogus"], {}, "/")).toThrow(/bogus/);
  });

  it("traces only when OTEL_TRACES_EXPORTER asks, as ahp-gateway unless OTEL_SERVICE_NAME says otherwise", () => {
    expect(parseGatewayConfig([], {}, "/").tracing).toBeUndefined();
    expect(parseGatewayConfig([], { OTEL_TRACES_EXPORTER: "otlp" }, "/").tracing).toEqual({ protocol: "http/protobuf", serviceName: "ahp-gateway" });
    expect(parseGatewayConfig([], { OTEL_TRACES_EXPORTER: "otlp", OTEL_SERVICE_NAME: "edge" }, "/").tracing?.serviceName).toBe("edge");
    expect(() => parseGatewayConfig([], { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "/")).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL must be one of/);
  });
});
