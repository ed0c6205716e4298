import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { AhpTestClient, rpcErrorOf } from "../support/ahp-test-client.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { startServiceProcess, type ServiceProcess } from "./service-process.js";

const RUNNER_TOKEN = "e2e-runner-token";
/** OTLP's SpanKind values. */
const SERVER = 2;
const CLIENT = 3;
/** OTLP's status code of a failed span. */
const STATUS_ERROR = 2;
/** No OTEL_* variable of the test's own environment leaks into the processes. */
const NO_OTEL = Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith("OTEL_")).map((name) => [name, undefined]));

/** Both compiled processes, with `env` added to each one's environment. */
async function startBoth(env: NodeJS.ProcessEnv): Promise<{ runner: RunnerProcess; gateway: ServiceProcess; stop(): Promise<void> }> {
  const home = mkdtempSync(join(tmpdir(), "e2e-tracing-"));
  const runner = await startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN], { ...NO_OTEL, SHELL: "/bin/sh", HOME: home, ENV: "", ...env }, { compiled: true });
  const gateway = await startServiceProcess("gateway/main.ts", ["--port", "0", "--runner", runner.url], { ...NO_OTEL, RUNNER_TOKEN, GATEWAY_TOKEN: undefined, HOME: home, ...env }, { compiled: true })
    .catch(async (err: unknown) => {
      await runner.stop();
      throw err;
    });
  return {
    runner,
    gateway,
    async stop() {
      // SIGTERM: each process exports the spans it still holds before it exits.
      expect(await gateway.stop()).toBe(0);
      expect(await runner.stop()).toBe(0);
    },
  };
}

/** The one span matching `match`, failing with every span received when there is not exactly one. */
function theSpan(spans: ReceivedSpan[], match: Partial<ReceivedSpan>): ReceivedSpan {
  const found = spans.filter((span) => Object.entries(match).every(([key, value]) => span[key as keyof ReceivedSpan] === value));
  expect(found, `one span like ${JSON.stringify(match)} among ${JSON.stringify(spans, null, 1)}`).toHaveLength(1);
  return found[0]!;
}

/** A Connect client of the runner at `url` as another service would be, sending `traceparent` when given. */
function outsideCaller(url: string, traceparent?: string): Client<typeof TerminalService> {
  const caller: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${RUNNER_TOKEN}`);
    if (traceparent) request.header.set("traceparent", traceparent);
    return next(request);
  };
  return createClient(TerminalService, createConnectTransport({ baseUrl: url, httpVersion: "2", interceptors: [caller] }));
}

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

describe("OpenTelemetry tracing of the two processes", () => {
  for (const [protocol, contentType] of [
    ["http/protobuf", "application/x-protobuf"],
    ["http/json", "application/json"],
  ] as const) {
    it(`follows one createTerminal from the gateway into the runner, in one trace (${protocol})`, async () => {
      receiver = await startOtlpReceiver();
      const system = await startBoth({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol });
      const uri = `agenthost-terminal://e2e/${crypto.randomUUID()}`;
      let refused;
      try {
        const client = await AhpTestClient.initialized(system.gateway.firstLine, { clientId: "e2e" });
        await client.call("createTerminal", { channel: uri, claim: { kind: "client", clientId: "e2e" } });
        refused = await rpcErrorOf(client.call("createTerminal", { channel: uri, claim: { kind: "client", clientId: "e2e" } }));
        client.close();
      } finally {
        await system.stop();
      }
      const { spans } = receiver;
      expect(new Set(receiver.contentTypes)).toEqual(new Set([contentType]));
      const requests = spans.filter((span) => span.service === "ahp-gateway" && span.name === "createTerminal");
      expect(requests).toHaveLength(2);
      const request = theSpan(requests, { statusCode: 0 });
      expect(request).toMatchObject({ kind: SERVER, parentSpanId: "", attributes: { "rpc.system": "jsonrpc", "rpc.method": "createTerminal", "rpc.jsonrpc.version": "2.0" } });
      const terminal = theSpan(spans, { name: "terminal.create", parentSpanId: request.spanId, statusCode: 0 });
      expect(terminal.attributes).toMatchObject({ "ahp.terminal.uri": uri });
      const spawnCall = theSpan(spans, { service: "ahp-gateway", name: "terminal.v1.TerminalService/Spawn", parentSpanId: terminal.spanId });
      expect(spawnCall).toMatchObject({ kind: CLIENT, traceId: request.traceId, attributes: { "rpc.system": "grpc", "rpc.grpc.status_code": 0 } });
      const spawn = theSpan(spans, { service: "terminal-runner", name: "terminal.v1.TerminalService/Spawn" });
      expect(spawn).toMatchObject({ kind: SERVER, traceId: request.traceId, parentSpanId: spawnCall.spanId, attributes: { "rpc.system": "grpc", "rpc.method": "Spawn", "rpc.grpc.status_code": 0 } });

      const failed = theSpan(requests, { statusCode: STATUS_ERROR });
      expect(failed.attributes).toMatchObject({ "rpc.jsonrpc.error_code": refused.code });
    });
  }

  it("continues the trace of any caller of the runner that sends traceparent", async () => {
    receiver = await startOtlpReceiver();
    const runner = await startRunnerProcess(
      ["--port", "0", "--token", RUNNER_TOKEN],
      { ...NO_OTEL, OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_SERVICE_NAME: "runner-under-test" },
      { compiled: true },
    );
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpanId = "00f067aa0ba902b7";
    const client = outsideCaller(runner.url, `00-${traceId}-${callerSpanId}-01`);
    try {
      await client.list({});
      await expect(client.get({ id: "no-such-terminal" })).rejects.toThrow(/not.found/i);
    } finally {
      expect(await runner.stop()).toBe(0);
    }
    const list = theSpan(receiver.spans, { name: "terminal.v1.TerminalService/List" });
    expect(list).toMatchObject({ service: "runner-under-test", kind: SERVER, traceId, parentSpanId: callerSpanId, statusCode: 0, attributes: { "rpc.system": "connect_rpc" } });
    // NOT_FOUND is the caller's mistake, not a fault of the runner: recorded, but the span is not failed.
    const get = theSpan(receiver.spans, { name: "terminal.v1.TerminalService/Get" });
    expect(get).toMatchObject({ traceId, parentSpanId: callerSpanId, statusCode: 0, attributes: { "rpc.grpc.status_code": 5 } });
  });

  it("samples as OTEL_TRACES_SAMPLER says, and keeps a caller's decision not to sample", async () => {
    receiver = await startOtlpReceiver();
    const runner = await startRunnerProcess(
      ["--port", "0", "--token", RUNNER_TOKEN],
      { ...NO_OTEL, OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: "parentbased_always_off" },
      { compiled: true },
    );
    const callWith = (traceparent?: string) => outsideCaller(runner.url, traceparent).list({});
    try {
      await callWith();
      await callWith("00-11111111111111111111111111111111-1111111111111111-00");
      await callWith("00-22222222222222222222222222222222-2222222222222222-01");
    } finally {
      expect(await runner.stop()).toBe(0);
    }
    expect(receiver.spans.map((span) => span.traceId)).toEqual(["22222222222222222222222222222222"]);
  });

  it("loads no SDK and exports nothing unless OTEL_TRACES_EXPORTER asks for it, even with an endpoint set", async () => {
    receiver = await startOtlpReceiver();
    // NODE_DEBUG=module has Node name every CommonJS module it loads (the @opentelemetry packages are CommonJS).
    const system = await startBoth({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "10", NODE_DEBUG: "module" });
    try {
      const client = await AhpTestClient.initialized(system.gateway.firstLine, { clientId: "e2e" });
      await client.call("createTerminal", { channel: `agenthost-terminal://e2e/${crypto.randomUUID()}`, claim: { kind: "client", clientId: "e2e" } });
      client.close();
    } finally {
      await system.stop();
    }
    expect(receiver.contentTypes).toEqual([]);
    for (const service of [system.runner, system.gateway]) {
      const stderr = service.stderrLines.join("\n");
      expect(stderr).toContain("@opentelemetry/api");
      expect(stderr).not.toMatch(/@opentelemetry\/(sdk-|exporter-|resources|core)/);
      expect(stderr).not.toContain("tracing:");
    }
  });

  it("stops cleanly, with a warning, when the collector cannot be reached", async () => {
    const gone = await startOtlpReceiver();
    await gone.close();
    const runner = await startRunnerProcess(
      ["--port", "0", "--token", RUNNER_TOKEN],
      { ...NO_OTEL, OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: gone.url },
      { compiled: true },
    );
    await runner.client(RUNNER_TOKEN).list({});
    expect(await runner.stop()).toBe(0);
    const warnings = runner.stderrLines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level === 40);
    expect(warnings.map((entry) => entry.msg)).toContain("tracing: the last spans could not be exported");
  });
});
