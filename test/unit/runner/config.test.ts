import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunnerConfig } from "../../../services/runner/config.js";

describe("parseRunnerConfig", () => {
  it("binds loopback on the default port and generates a token when none is given", () => {
    const config = parseRunnerConfig([], {});
    expect(config).toMatchObject({ host: "127.0.0.1", port: 7070, tokenGenerated: true, retainBytes: 1048576, heartbeatMs: 15000 });
    expect(config.token).toMatch(/^[\w-]{32}$/);
  });

  it("takes the token from --token over RUNNER_TOKEN", () => {
    expect(parseRunnerConfig(["--token", "flag"], { RUNNER_TOKEN: "env" }).token).toBe("flag");
    expect(parseRunnerConfig([], { RUNNER_TOKEN: "env" })).toMatchObject({ token: "env", tokenGenerated: false });
  });

  it("turns authentication off only with --insecure", () => {
    expect(parseRunnerConfig(["--insecure"], { RUNNER_TOKEN: "env" })).toMatchObject({ token: undefined, tokenGenerated: false });
  });

  it("reads every numeric flag", () => {
    const config = parseRunnerConfig(
      ["--port", "0", "--retain-bytes", "4096", "--retain-total-bytes", "8192", "--heartbeat-ms", "50", "--max-terminals", "3", "--close-grace-ms", "0"],
      {},
    );
    expect(config).toMatchObject({ port: 0, retainBytes: 4096, retainTotalBytes: 8192, heartbeatMs: 50, maxTerminals: 3, closeGraceMs: 0 });
  });

  it("reads the limits that keep one caller from starving the others, with their defaults", () => {
    expect(parseRunnerConfig([], {})).toMatchObject({ maxMessageBytes: 16 * 1024 * 1024, maxConcurrentSpawns: 4, maxQueuedSpawns: 128 });
    expect(parseRunnerConfig(["--max-message-bytes", "1048576", "--max-concurrent-spawns", "2", "--max-queued-spawns", "0"], {})).toMatchObject({
      maxMessageBytes: 1048576,
      maxConcurrentSpawns: 2,
      maxQueuedSpawns: 0,
    });
    expect(() => parseRunnerConfig(["--max-concurrent-spawns", "0"], {})).toThrow(/--max-concurrent-spawns must be an integer from 1/);
    expect(parseRunnerConfig([], {})).toMatchObject({ maxConnections: 1024, maxConnectionsPerAddress: 128, handshakeTimeoutMs: 10_000, idleTimeoutMs: 300_000 });
    const sockets = ["--max-connections", "10", "--max-connections-per-address", "2", "--handshake-timeout-ms", "500", "--idle-timeout-ms", "0"];
    expect(parseRunnerConfig(sockets, {})).toMatchObject({ maxConnections: 10, maxConnectionsPerAddress: 2, handshakeTimeoutMs: 500, idleTimeoutMs: 0 });
    expect(() => parseRunnerConfig(["--max-connections-per-address", "0"], {})).toThrow(/--max-connections-per-address must be an integer from 1/);
    expect(() => parseRunnerConfig(["--handshake-timeout-ms", "0"], {})).toThrow(/--handshake-timeout-ms must be an integer from 10/);
    expect(() => parseRunnerConfig(["--max-message-bytes", "1000"], {})).toThrow(/--max-message-bytes must be an integer from 65536 to 4294967295/);
    expect(() => parseRunnerConfig(["--max-message-bytes", "4294967296"], {})).toThrow(/--max-message-bytes/);
  });

  it("runs terminals' processes as nice as the runner unless --process-nice says otherwise (0 to 19)", () => {
    expect(parseRunnerConfig([], {}).processNice).toBe(0);
    expect(parseRunnerConfig(["--process-nice", "10"], {}).processNice).toBe(10);
    expect(parseRunnerConfig(["--process-nice", "19"], {}).processNice).toBe(19);
    expect(() => parseRunnerConfig(["--process-nice", "20"], {})).toThrow(/--process-nice must be an integer from 0 to 19/);
    expect(() => parseRunnerConfig(["--process-nice", "-5"], {})).toThrow(/--process-nice/);
  });

  it("refuses unknown flags, bad numbers, empty tokens and unknown log levels with a readable message", () => {
    expect(() => parseRunnerConfig(["--nope"], {})).toThrow(/nope/);
    expect(() => parseRunnerConfig(["--port", "70000"], {})).toThrow(/--port must be an integer from 0 to 65535/);
    expect(() => parseRunnerConfig(["--retain-bytes", "1e3"], {})).toThrow(/--retain-bytes/);
    expect(() => parseRunnerConfig(["--token", ""], {})).toThrow(/must not be empty/);
    expect(() => parseRunnerConfig(["--log-level", "loud"], {})).toThrow(/--log-level/);
    expect(() => parseRunnerConfig(["--retain-bytes", "100", "--retain-total-bytes", "10"], {})).toThrow(/--retain-total-bytes/);
  });

  it("keeps reflection behind the token unless --open-reflection, and serves cleartext unless given TLS files", () => {
    expect(parseRunnerConfig([], {})).toMatchObject({ openReflection: false, tls: undefined });
    expect(parseRunnerConfig(["--open-reflection"], {}).openReflection).toBe(true);
    expect(parseRunnerConfig(["--tls-cert", "c.pem", "--tls-key", "k.pem"], {}).tls).toEqual({ cert: "c.pem", key: "k.pem" });
    expect(parseRunnerConfig(["--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-client-ca", "ca.pem"], {}).tls).toEqual({ cert: "c.pem", key: "k.pem", clientCa: "ca.pem" });
  });

  it("refuses half a TLS configuration", () => {
    expect(() => parseRunnerConfig(["--tls-cert", "c.pem"], {})).toThrow("--tls-cert and --tls-key go together");
    expect(() => parseRunnerConfig(["--tls-key", "k.pem"], {})).toThrow("--tls-cert and --tls-key go together");
    expect(() => parseRunnerConfig(["--tls-client-ca", "ca.pem"], {})).toThrow(/--tls-client-ca needs --tls-cert and --tls-key/);
  });

  it("reads the token from --token-file or RUNNER_TOKEN_FILE (before RUNNER_TOKEN), and the run-as flags", () => {
    const dir = mkdtempSync(join(tmpdir(), "runner-config-"));
    const file = join(dir, "token");
    writeFileSync(file, "from-file\n", { mode: 0o600 });
    expect(parseRunnerConfig(["--token-file", file], { RUNNER_TOKEN: "env" })).toMatchObject({ token: "from-file", tokenGenerated: false, tokenWarning: undefined });
    expect(parseRunnerConfig([], { RUNNER_TOKEN_FILE: file, RUNNER_TOKEN: "env" })).toMatchObject({ token: "from-file" });
    expect(parseRunnerConfig(["--token", "flag"], { RUNNER_TOKEN_FILE: file })).toMatchObject({ token: "flag" });
    chmodSync(file, 0o644);
    expect(parseRunnerConfig(["--token-file", file], {}).tokenWarning).toMatch(/readable by its group or others/);
    expect(() => parseRunnerConfig(["--token", "a", "--token-file", file], {})).toThrow(/not both/);
    expect(() => parseRunnerConfig(["--token-file", join(dir, "missing")], {})).toThrow(/--token-file: cannot read/);
    expect(parseRunnerConfig([], {})).toMatchObject({ allowRunAs: false, allowRunAsRoot: false });
    expect(parseRunnerConfig(["--allow-run-as", "--allow-run-as-root"], {})).toMatchObject({ allowRunAs: true, allowRunAsRoot: true });
    expect(() => parseRunnerConfig(["--allow-run-as-root"], {})).toThrow(/goes with --allow-run-as/);
  });

  it("traces only when OTEL_TRACES_EXPORTER asks, as terminal-runner unless OTEL_SERVICE_NAME says otherwise", () => {
    expect(parseRunnerConfig([], {}).tracing).toBeUndefined();
    expect(parseRunnerConfig([], { OTEL_TRACES_EXPORTER: "otlp" }).tracing).toEqual({ protocol: "http/protobuf", serviceName: "terminal-runner" });
    expect(parseRunnerConfig([], { OTEL_TRACES_EXPORTER: "otlp", OTEL_SERVICE_NAME: "runner-7" }).tracing?.serviceName).toBe("runner-7");
    expect(() => parseRunnerConfig([], { OTEL_TRACES_EXPORTER: "jaeger" })).toThrow(/OTEL_TRACES_EXPORTER must be otlp or none/);
  });
});
