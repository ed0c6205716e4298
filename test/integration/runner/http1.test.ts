import { execFile } from "node:child_process";
import { connect, createServer, type Socket } from "node:net";
import { promisify } from "node:util";
import { Code, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { ServerReflection } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { listen } from "../../../lib/listen.js";
import { codeOf } from "../../support/connect-code.js";
import { collect, runToExit, startTestRunner, useTestRunner } from "./harness.js";

const run = promisify(execFile);

const runner = useTestRunner({ heartbeatMs: 50 });

const overHttp1 = {
  "Connect (binary)": (baseUrl: string, interceptors: Interceptor[]) => createConnectTransport({ baseUrl, interceptors, httpVersion: "1.1" }),
  "Connect (JSON)": (baseUrl: string, interceptors: Interceptor[]) => createConnectTransport({ baseUrl, interceptors, httpVersion: "1.1", useBinaryFormat: false }),
  "gRPC-Web": (baseUrl: string, interceptors: Interceptor[]) => createGrpcWebTransport({ baseUrl, interceptors, httpVersion: "1.1" }),
};

/** curl over HTTP/1.1 (curl's default for http://), returning the status line's code and the body. */
async function curl(args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await run("curl", ["-sS", "--http1.1", "-w", "\n%{http_code} %{http_version}", ...args]);
  const [, body = "", status = "", version = ""] = /^([\s\S]*)\n(\d+) ([\d.]+)$/.exec(stdout) ?? [];
  expect(version).toBe("1.1");
  return { status: Number(status), body };
}

describe.each(Object.entries(overHttp1))("%s over HTTP/1.1 on the h2c port", (_, make) => {
  it("serves unary calls, a streaming Attach and a WriteStream client stream", async () => {
    const client = runner.clientFor(make);
    const { terminal } = await client.spawn({ command: "read line; echo got:$line", env: { HOME: "/tmp" } });
    async function* input() {
      yield { id: terminal!.id, data: new TextEncoder().encode("one") };
      yield { id: terminal!.id, data: new TextEncoder().encode("-two\r") };
    }
    expect((await client.writeStream(input())).writes).toBe(2n);
    const { output, exit } = await runToExit(client, terminal!.id);
    expect(output.toString()).toContain("got:one-two\r\n");
    expect(exit?.exitCode).toBe(0);
    expect((await client.get({ id: terminal!.id })).terminal?.state).toBeDefined();
  });

  it("refuses a bidirectional stream with UNIMPLEMENTED and says what it needs", async () => {
    const reflection = createClient(ServerReflection, make(runner.server.url, []));
    async function* questions() {
      yield { messageRequest: { case: "listServices" as const, value: "" } };
    }
    const failure = await (async () => {
      for await (const _ of reflection.serverReflectionInfo(questions(), { headers: { authorization: `Bearer ${runner.token}` } })) void _;
    })().catch((err: unknown) => err as { code: Code; rawMessage: string });
    expect(failure).toMatchObject({ code: Code.Unimplemented });
    expect(failure?.rawMessage).toMatch(/ServerReflectionInfo is a bidirectional stream and needs HTTP\/2/);
  });

  it("refuses Follow, the runner's own bidirectional stream, the same way", async () => {
    const client = runner.clientFor(make);
    async function* requests() {
      yield { action: { case: "stop" as const, value: 1 } };
    }
    const failure = await (async () => {
      for await (const _ of client.follow(requests())) void _;
    })().catch((err: unknown) => err as { code: Code; rawMessage: string });
    expect(failure).toMatchObject({ code: Code.Unimplemented });
    expect(failure?.rawMessage).toMatch(/terminal\.v1\.TerminalService\/Follow is a bidirectional stream and needs HTTP\/2/);
  });
});

describe("plain curl over HTTP/1.1", () => {
  it("calls List with JSON and the token, as the runner's documentation shows", async () => {
    await runner.grpc.spawn({ id: "curl-listed", argv: ["sleep", "30"], labels: { via: "curl" } });
    const { status, body } = await curl([
      "-H", "Content-Type: application/json",
      "-H", `Authorization: Bearer ${runner.token}`,
      "-d", '{"labelSelector":{"via":"curl"}}',
      `${runner.server.url}/terminal.v1.TerminalService/List`,
    ]);
    expect(status).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ terminals: [{ id: "curl-listed", labels: { via: "curl" }, state: "TERMINAL_STATE_RUNNING" }] });
    await runner.grpc.close({ id: "curl-listed", graceMs: 0 });
  });

  it("gets 401 with a Connect error without the token, and health needs none", async () => {
    const refused = await curl(["-H", "Content-Type: application/json", "-d", "{}", `${runner.server.url}/terminal.v1.TerminalService/List`]);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toEqual({ code: "unauthenticated", message: "missing bearer token" });
    const health = await curl(["-H", "Content-Type: application/json", "-d", "{}", `${runner.server.url}/grpc.health.v1.Health/Check`]);
    expect(JSON.parse(health.body)).toEqual({ status: "SERVING" });
  });

  it.each(["grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "terminal.v1.TerminalService/Follow"])("gets a plain-text 505 naming the problem for the bidirectional %s", async (method) => {
    const { status, body } = await curl(["-d", "{}", `${runner.server.url}/${method}`]);
    expect(status).toBe(505);
    expect(body).toMatch(/is a bidirectional stream and needs HTTP\/2/);
  });
});

describe("telling the protocols apart", () => {
  it("recognizes the HTTP/2 preface when it arrives a byte at a time", async () => {
    const relay = await startDribblingRelay(runner.server.port);
    try {
      const client = runner.clientFor((_, interceptors) => createGrpcTransport({ baseUrl: `http://127.0.0.1:${relay.port}`, interceptors }));
      const { terminal } = await client.spawn({ argv: ["echo", "through the relay"] });
      expect((await runToExit(client, terminal!.id)).output.toString()).toBe("through the relay\r\n");
      expect(relay.piecesSent).toBeGreaterThanOrEqual(24);
    } finally {
      await relay.close();
    }
  });

  it("serves HTTP/2 and HTTP/1.1 callers side by side", async () => {
    const h2 = runner.grpc;
    const h1 = runner.clientFor(overHttp1["Connect (JSON)"]);
    const [a, b] = await Promise.all([h2.spawn({ argv: ["echo", "h2"] }), h1.spawn({ argv: ["echo", "h1"] })]);
    const [outA, outB] = await Promise.all([runToExit(h1, a.terminal!.id), runToExit(h2, b.terminal!.id)]);
    expect([outA.output.toString(), outB.output.toString()]).toEqual(["h2\r\n", "h1\r\n"]);
  });
});

describe("shutdown with HTTP/1.1 calls in flight", () => {
  it("ends an Attach over HTTP/1.1 with UNAVAILABLE and closes without waiting out the grace", async () => {
    const doomed = await startTestRunner({ heartbeatMs: 50 });
    const client = doomed.clientFor(overHttp1["Connect (binary)"]);
    const { terminal } = await client.spawn({ argv: ["sleep", "30"] });
    let events = 0;
    const attached = collect(client.attach({ id: terminal!.id, follow: true }), () => ++events < 0);
    await expect.poll(() => events).toBeGreaterThan(0);
    const failed = codeOf(attached);
    const started = Date.now();
    await doomed.server.close();
    expect(await failed).toBe(Code.Unavailable);
    expect(Date.now() - started).toBeLessThan(1_500);
    await doomed.registry.closeAll();
  });
});

/** The pause between the bytes a dribbling relay forwards: each arrives in a read of its own. */
const DRIBBLE_INTERVAL_MS = 3;

/** A TCP relay that forwards the first 24 bytes a client sends one at a time, a few milliseconds apart. */
async function startDribblingRelay(targetPort: number): Promise<{ port: number; piecesSent: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { piecesSent: 0 };
  const server = createServer((inbound) => {
    const outbound = connect(targetPort, "127.0.0.1");
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on("error", () => socket.destroy());
      socket.once("close", () => sockets.delete(socket));
    }
    outbound.pipe(inbound);
    let forwarded = 0;
    let chain = Promise.resolve();
    inbound.on("data", (chunk: Buffer) => {
      chain = chain.then(async () => {
        let at = 0;
        for (; at < chunk.length && forwarded < 24; at++, forwarded++) {
          outbound.write(chunk.subarray(at, at + 1));
          state.piecesSent++;
          await new Promise((resolve) => setTimeout(resolve, DRIBBLE_INTERVAL_MS));
        }
        if (at < chunk.length) outbound.write(chunk.subarray(at));
      });
    });
    inbound.once("close", () => outbound.destroy());
    outbound.once("close", () => inbound.destroy());
  });
  const { port } = await listen(server, 0, "127.0.0.1");
  return {
    port,
    get piecesSent() {
      return state.piecesSent;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
