import http2 from "node:http2";
import { Code, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { RunnerMetrics } from "../../../services/runner/metrics.js";
import { attachEventsOf, openFollow, outputOf } from "./follow-session.js";
import { useTestRunner } from "./harness.js";

const metrics = new RunnerMetrics();
const runner = useTestRunner({ metrics });

/** Every protocol a Node client may call the streams with over HTTP/2: binary gRPC takes the runner's own frames, the others connect's. */
const PROTOCOLS = {
  "gRPC (binary)": (baseUrl: string, interceptors: Interceptor[]) => createGrpcTransport({ baseUrl, interceptors }),
  "gRPC (JSON)": (baseUrl: string, interceptors: Interceptor[]) => createGrpcTransport({ baseUrl, interceptors, useBinaryFormat: false }),
  "gRPC-Web": (baseUrl: string, interceptors: Interceptor[]) => createGrpcWebTransport({ baseUrl, interceptors, httpVersion: "2" }),
  Connect: (baseUrl: string, interceptors: Interceptor[]) => createConnectTransport({ baseUrl, interceptors, httpVersion: "2" }),
  "Connect (JSON)": (baseUrl: string, interceptors: Interceptor[]) => createConnectTransport({ baseUrl, interceptors, httpVersion: "2", useBinaryFormat: false }),
};

/** A one-message gRPC body. */
const frame = (message: Buffer): Buffer => Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);
/** WriteStreamRequest{id: "none", data: "a"}, as protobuf writes it. */
const WRITE_TO_NONE = Buffer.from([0x0a, 0x04, ...Buffer.from("none"), 0x12, 0x01, 0x61]);

/** One raw gRPC call that sends `body` and keeps its request open unless `end`; resolves with the status the runner answered with. */
function rawCall(path: string, headers: http2.OutgoingHttpHeaders, body: Buffer, end: boolean): Promise<{ status?: string; message?: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(runner.server.url);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", authorization: `Bearer ${runner.token}`, ...headers });
    let answer: http2.IncomingHttpHeaders = {};
    stream.on("response", (h) => (answer = h));
    stream.on("trailers", (t) => (answer = { ...answer, ...t }));
    stream.on("data", () => undefined);
    stream.on("close", () => {
      session.close();
      const message = answer["grpc-message"];
      resolve({ status: answer["grpc-status"] as string | undefined, message: message === undefined ? undefined : decodeURIComponent(String(message)) });
    });
    stream.write(body);
    if (end) stream.end();
  });
}

describe("WriteStream and Follow over the runner's own gRPC frames", () => {
  it.each(Object.entries(PROTOCOLS))("serve the same over %s: writes in order and counted, output followed to the exit", async (_, make) => {
    const client = runner.clientFor(make);
    const { terminal } = await client.spawn({ command: 'read -r line; echo "got:$line"', env: { HOME: "/tmp" } });
    const id = terminal!.id;
    const follow = openFollow(client);
    await follow.start(1, { id });
    async function* keys() {
      for (const key of "héllo\r") yield { id, data: Buffer.from(key) };
    }
    expect((await client.writeStream(keys())).writes).toBe(6n);
    const events = attachEventsOf(await follow.ended(1));
    expect(outputOf(events).toString()).toContain("got:héllo\r\n");
    expect(await follow.closeAndFinish()).toBeUndefined();
  });

  it("refuses a compressed request with UNIMPLEMENTED naming what it accepts, as connect does for every other method", async () => {
    for (const path of ["/terminal.v1.TerminalService/WriteStream", "/terminal.v1.TerminalService/Follow", "/terminal.v1.TerminalService/Get"]) {
      const answer = await rawCall(path, { "grpc-encoding": "gzip" }, frame(Buffer.alloc(0)), true);
      expect(answer, path).toEqual({ status: String(Code.Unimplemented), message: 'unknown compression "gzip": supported encodings are ' });
    }
  });

  it("ends a call at the caller's grpc-timeout with DEADLINE_EXCEEDED, and refuses a malformed one", async () => {
    const started = Date.now();
    const late = await rawCall("/terminal.v1.TerminalService/Follow", { "grpc-timeout": "200m" }, Buffer.alloc(0), false);
    expect(late.status).toBe(String(Code.DeadlineExceeded));
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    const malformed = await rawCall("/terminal.v1.TerminalService/WriteStream", { "grpc-timeout": "soon" }, frame(WRITE_TO_NONE), true);
    expect(malformed.status).toBe(String(Code.InvalidArgument));
  });

  it("ends WriteStream with the first refused write's error, and counts each call by how it ended", async () => {
    const before = await metrics.registry.metrics();
    const count = (text: string, method: string, code: string): number => Number(new RegExp(`^runner_rpc_requests_total\\{method="${method}",code="${code}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    const refused = await rawCall("/terminal.v1.TerminalService/WriteStream", {}, frame(WRITE_TO_NONE), false);
    expect(refused.status).toBe(String(Code.NotFound));
    const after = await metrics.registry.metrics();
    expect(count(after, "WriteStream", "NOT_FOUND") - count(before, "WriteStream", "NOT_FOUND")).toBe(1);
    expect(count(after, "WriteStream", "OK")).toBeGreaterThan(0);
    expect(count(after, "Follow", "OK")).toBeGreaterThan(0);
  });

  it("needs the token, as every other method does", async () => {
    const answer = await rawCall("/terminal.v1.TerminalService/Follow", { authorization: "Bearer wrong" }, Buffer.alloc(0), true);
    expect(answer).toEqual({ status: String(Code.Unauthenticated), message: "wrong bearer token" });
  });
});
