import { Code, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { codeOf } from "../../support/connect-code.js";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../../gen/grpc/health/v1/health_pb.js";
import { TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";
import { runToExit, useTestRunner } from "./harness.js";

const runner = useTestRunner({ heartbeatMs: 50 });

const transports = {
  grpc: (baseUrl: string, interceptors: Interceptor[] = []) => createGrpcTransport({ baseUrl, interceptors }),
  connect: (baseUrl: string, interceptors: Interceptor[] = []) => createConnectTransport({ baseUrl, interceptors, httpVersion: "2" }),
  "grpc-web": (baseUrl: string, interceptors: Interceptor[] = []) => createGrpcWebTransport({ baseUrl, interceptors, httpVersion: "2" }),
  "connect-json": (baseUrl: string, interceptors: Interceptor[] = []) =>
    createConnectTransport({ baseUrl, interceptors, httpVersion: "2", useBinaryFormat: false }),
};

describe.each(Object.entries(transports))("over %s", (_, make) => {
  it("serves spawn and a streaming attach with the token", async () => {
    const client = runner.clientFor(make);
    const { terminal } = await client.spawn({ argv: ["echo", "hello"] });
    const { output, exit } = await runToExit(client, terminal!.id);
    expect(output.toString()).toBe("hello\r\n");
    expect(exit?.exitCode).toBe(0);
  });

  it("refuses calls without the token or with a wrong one as UNAUTHENTICATED", async () => {
    const anonymous = createClient(TerminalService, make(runner.server.url));
    expect(await codeOf(anonymous.list({}))).toBe(Code.Unauthenticated);
    expect(await codeOf(anonymous.list({}, { headers: { authorization: "Bearer nope" } }))).toBe(Code.Unauthenticated);
    expect(await codeOf(anonymous.list({}, { headers: { authorization: runner.token } }))).toBe(Code.Unauthenticated);
    expect(await codeOf(anonymous.list({}, { headers: { authorization: `Bearer ${runner.token}` } }))).toBeUndefined();
  });

  it("answers health checks without a token", async () => {
    const health = createClient(Health, make(runner.server.url));
    expect((await health.check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await health.check({ service: "terminal.v1.TerminalService" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect(await codeOf(health.check({ service: "nope" }))).toBe(Code.NotFound);
  });
});

describe("precise codes over real HTTP/2", () => {
  it("maps each bad request to its code", async () => {
    const client = runner.grpc;
    const { terminal } = await client.spawn({ command: "exit 0" });
    await runToExit(client, terminal!.id);
    expect(await codeOf(client.get({ id: "missing" }))).toBe(Code.NotFound);
    expect(await codeOf(client.write({ id: "missing", data: new Uint8Array([1]) }))).toBe(Code.NotFound);
    expect(await codeOf(client.resize({ id: terminal!.id, cols: 0, rows: 24 }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.resize({ id: terminal!.id, cols: 80, rows: 65_000 }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.signal({ id: terminal!.id, signal: "SIGWHAT" }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.spawn({ argv: ["ls"], command: "ls" }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.spawn({ cols: 0 }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.write({ id: terminal!.id, data: new Uint8Array([1]) }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(client.spawn({ id: terminal!.id, command: "true" }))).toBe(Code.AlreadyExists);
  });

  it("sends heartbeats on an idle attach", async () => {
    const { terminal } = await runner.grpc.spawn({ argv: ["sleep", "10"] });
    for await (const event of runner.grpc.attach({ id: terminal!.id, follow: true })) {
      expect(event.event.case).toBe("heartbeat");
      break;
    }
    await runner.grpc.close({ id: terminal!.id });
  });
});
