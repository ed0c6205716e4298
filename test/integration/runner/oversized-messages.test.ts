import http2 from "node:http2";
import { Code, ConnectError, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import type { TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../../services/runner/config.js";
import { MAX_DISCARDED_BYTES } from "../../../services/runner/rpc/message-size-gate.js";
import { collect, startTestRunner, useTestRunner } from "./harness.js";

const runner = useTestRunner();

/** Just over the limit, and larger than the 10 MB a Node HTTP/2 client may hold by default. */
const OVERSIZED = new Uint8Array(DEFAULT_MAX_MESSAGE_BYTES + 1024 * 1024);
const LIMIT_MESSAGE = /^the request message \(\d+ bytes\) is larger than the 16777216 bytes the runner accepts \(its --max-message-bytes\)$/;

// Clients with Node's default HTTP/2 settings, as most callers have them: one connection each.
const transports = {
  grpc: (baseUrl: string, interceptors: Interceptor[]) => createGrpcTransport({ baseUrl, interceptors }),
  connect: (baseUrl: string, interceptors: Interceptor[]) => createConnectTransport({ baseUrl, interceptors, httpVersion: "2" }),
  "grpc-web": (baseUrl: string, interceptors: Interceptor[]) => createGrpcWebTransport({ baseUrl, interceptors, httpVersion: "2" }),
};

async function refusal(call: Promise<unknown>): Promise<{ code: Code; message: string } | undefined> {
  try {
    await call;
    return undefined;
  } catch (err) {
    const { code, rawMessage } = ConnectError.from(err);
    return { code, message: rawMessage };
  }
}

/** A `cat` under a pty with an Attach stream reading it; `seen(text)` resolves once the stream delivered `text`. */
async function catWithReader(client: Client<typeof TerminalService>): Promise<{ id: string; seen(text: string): Promise<void>; stop(): void }> {
  const { terminal } = await client.spawn({ argv: ["cat"] });
  const id = terminal!.id;
  const abort = new AbortController();
  let output = "";
  const waiters: Array<{ text: string; done: () => void }> = [];
  void collect(client.attach({ id, follow: true }, { signal: abort.signal }), (chunks) => {
    output = Buffer.concat(chunks).toString();
    for (const waiter of waiters.filter((w) => output.includes(w.text))) waiter.done();
    return false;
  }).catch(() => undefined);
  return {
    id,
    seen: (text) => (output.includes(text) ? Promise.resolve() : new Promise((done) => waiters.push({ text, done }))),
    stop: () => abort.abort(),
  };
}

describe.each(Object.entries(transports))("an oversized message over %s", (protocol, make) => {
  it("fails alone with RESOURCE_EXHAUSTED naming the limit, while the connection and an open Attach stream carry on", async () => {
    const client = runner.clientFor(make);
    const cat = await catWithReader(client);
    await client.write({ id: cat.id, data: Buffer.from(`before-${protocol}\r`) });
    await cat.seen(`before-${protocol}`);

    expect(await refusal(client.write({ id: cat.id, data: OVERSIZED }))).toEqual({ code: Code.ResourceExhausted, message: expect.stringMatching(LIMIT_MESSAGE) });

    await client.write({ id: cat.id, data: Buffer.from(`after-${protocol}\r`) });
    await cat.seen(`after-${protocol}`);
    expect((await client.get({ id: cat.id })).terminal?.id).toBe(cat.id);
    cat.stop();
    await client.close({ id: cat.id });
  });

  it("in a WriteStream ends that stream with RESOURCE_EXHAUSTED after the writes before it, and the connection carries on", async () => {
    const client = runner.clientFor(make);
    const cat = await catWithReader(client);
    async function* input() {
      yield { id: cat.id, data: Buffer.from(`streamed-${protocol}\r`) };
      await cat.seen(`streamed-${protocol}`);
      yield { id: cat.id, data: OVERSIZED };
    }
    expect(await refusal(client.writeStream(input()))).toEqual({ code: Code.ResourceExhausted, message: expect.stringMatching(LIMIT_MESSAGE) });

    await client.write({ id: cat.id, data: Buffer.from(`after-stream-${protocol}\r`) });
    await cat.seen(`after-stream-${protocol}`);
    cat.stop();
    await client.close({ id: cat.id });
  });
});

describe("the message limit", () => {
  it("is the runner's --max-message-bytes, over HTTP/2 and HTTP/1.1 alike", async () => {
    const small = await startTestRunner({ maxMessageBytes: 65536 });
    try {
      const refused = { code: Code.ResourceExhausted, message: expect.stringMatching(/is larger than the 65536 bytes the runner accepts/) };
      for (const make of [transports.grpc, (baseUrl: string, interceptors: Interceptor[]) => createConnectTransport({ baseUrl, interceptors, httpVersion: "1.1" })]) {
        const client = small.clientFor(make);
        expect(await refusal(client.write({ id: "none", data: new Uint8Array(65536) }))).toEqual(refused);
        expect(await refusal(client.write({ id: "none", data: new Uint8Array(60000) }))).toEqual({ code: Code.NotFound, message: expect.any(String) });
      }
    } finally {
      await small.close();
    }
  });
});

/** Opens a raw HTTP/2 request that sends `head` and never ends its body; resolves with what came back. */
function sendWithoutEnding(headers: http2.OutgoingHttpHeaders, head: Buffer): Promise<{ headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(runner.server.url);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", authorization: `Bearer ${runner.token}`, ...headers });
    let response: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => (response = h));
    stream.on("trailers", (t) => (trailers = t));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", () => undefined);
    stream.on("close", () => {
      session.close();
      resolve({ headers: response, trailers, body: Buffer.concat(chunks).toString() });
    });
    stream.write(head);
  });
}

describe("a message declared larger than the runner will read", () => {
  it("is refused from its length prefix alone, before its body arrives", async () => {
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(MAX_DISCARDED_BYTES + 1, 1);
    const answer = await sendWithoutEnding({ ":path": "/terminal.v1.TerminalService/Write", "content-type": "application/grpc", te: "trailers" }, prefix);
    const status = answer.trailers["grpc-status"] ?? answer.headers["grpc-status"];
    const message = decodeURIComponent(String(answer.trailers["grpc-message"] ?? answer.headers["grpc-message"]));
    expect({ status, message }).toEqual({ status: String(Code.ResourceExhausted), message: expect.stringMatching(/^the request message \(67108865 bytes\) is larger than/) });
  });

  it("is refused from its Content-Length alone (Connect unary), before its body arrives", async () => {
    const answer = await sendWithoutEnding(
      { ":path": "/terminal.v1.TerminalService/Write", "content-type": "application/proto", "content-length": String(MAX_DISCARDED_BYTES + 1) },
      Buffer.alloc(0),
    );
    expect(Number(answer.headers[":status"])).toBe(429);
    expect(JSON.parse(answer.body)).toEqual({ code: "resource_exhausted", message: expect.stringMatching(/^the request message \(67108865 bytes\) is larger than/) });
  });
});
