import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { describe, expect, it } from "vitest";
import { TerminalMode, TerminalService, type FollowEvent, type FollowRequestSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { withDirectStreams } from "../../../gateway/runners/direct-streams.js";
import { connectRunner } from "../../../gateway/runners/runner-client.js";
import { writeStreamFrame } from "../../../gateway/runners/write-stream-frame.js";
import type { FrameWriter } from "../../../lib/grpc-frames.js";
import { failureOf } from "../../support/connect-code.js";
import { attachEventsOf, outputOf } from "../runner/follow-session.js";
import { endOffsetOf, eventually, HELD_FLOOD_WATCH_MS, runToExit, startTestRunner, useTestRunner, waitForOutput } from "../runner/harness.js";

const runner = useTestRunner();

/** Input that sends `first`, then stays open until `end` is called (as a terminal's input does while nobody types). */
function openInput(first: { id: string; data: Uint8Array }): { input: AsyncIterable<{ id: string; data: Uint8Array }>; end(): void } {
  let end = (): void => undefined;
  const ended = new Promise<void>((resolve) => (end = resolve));
  async function* input() {
    yield first;
    await ended;
  }
  return { input: input(), end: () => end() };
}

describe("WriteStream and Follow, carried by the gateway's own framing on the runner's connection", () => {
  it("delivers every message in order, and returns the runner's count of them", async () => {
    const { terminals } = connectRunner(runner.server.url, runner.token);
    const { terminal } = await terminals.spawn({ command: 'read -r line; echo "got:${#line}:$line"', env: { HOME: "/tmp" } });
    const id = terminal!.id;
    const line = Array.from({ length: 300 }, (_, i) => String.fromCharCode(0x61 + (i % 26))).join("");
    async function* keystrokes() {
      for (const key of line) yield { id, data: Buffer.from(key) };
      yield { id, data: Buffer.from("\r") };
    }
    expect((await terminals.writeStream(keystrokes())).writes).toBe(301n);
    const { output } = await runToExit(runner.grpc, id);
    expect(output.toString()).toContain(`got:300:${line}\r\n`);
  });

  it("waits while the stream's window is full, so a paste larger than it arrives whole, then ends input", async () => {
    const { terminals } = connectRunner(runner.server.url, runner.token);
    const { terminal } = await terminals.spawn({ argv: ["md5sum"], mode: TerminalMode.PIPES });
    const id = terminal!.id;
    const paste = Buffer.alloc(6 * 1024 * 1024);
    // Printable bytes only: on pipes the runner turns a typed ^C into SIGINT.
    for (let i = 0; i < paste.length; i++) paste[i] = 0x20 + ((i * 7 + (i >> 12)) % 95);
    const CHUNK = 64 * 1024;
    async function* pieces() {
      for (let at = 0; at < paste.length; at += CHUNK) yield { id, data: paste.subarray(at, at + CHUNK), eof: at + CHUNK >= paste.length };
    }
    expect((await terminals.writeStream(pieces())).writes).toBe(BigInt(paste.length / CHUNK));
    const { output, exit } = await runToExit(runner.grpc, id);
    expect(output.toString()).toContain(createHash("md5").update(paste).digest("hex"));
    expect(exit?.exitCode).toBe(0);
  });

  it("sends the runner's token: without it, or with a wrong one, the call is UNAUTHENTICATED", async () => {
    for (const token of [undefined, "not-the-token"]) {
      const { terminals } = connectRunner(runner.server.url, token);
      expect(await failureOf(terminals.writeStream(openInput({ id: "none", data: Buffer.from("x") }).input))).toEqual({
        code: Code.Unauthenticated,
        message: token === undefined ? "missing bearer token" : "wrong bearer token",
      });
    }
  });

  it("ends with the runner's refusal as soon as it comes, though the input is still open", async () => {
    const { terminals } = connectRunner(runner.server.url, runner.token);
    const open = openInput({ id: "no-such-terminal", data: Buffer.from("x") });
    try {
      expect(await failureOf(terminals.writeStream(open.input))).toMatchObject({ code: Code.NotFound });
    } finally {
      open.end();
    }
  });

  it("ends with DEADLINE_EXCEEDED at its deadline and CANCELED when aborted, and the connection carries on", async () => {
    const { terminals } = connectRunner(runner.server.url, runner.token);
    const { terminal } = await terminals.spawn({ argv: ["cat"] });
    const id = terminal!.id;
    const late = openInput({ id, data: Buffer.from("a") });
    const cancelled = openInput({ id, data: Buffer.from("b") });
    const abort = new AbortController();
    try {
      expect(await failureOf(terminals.writeStream(late.input, { timeoutMs: 300 }))).toMatchObject({ code: Code.DeadlineExceeded });
      const call = terminals.writeStream(cancelled.input, { signal: abort.signal });
      setTimeout(() => abort.abort(), 100);
      expect(await failureOf(call)).toMatchObject({ code: Code.Canceled });
    } finally {
      late.end();
      cancelled.end();
    }
    async function* more() {
      yield { id, data: Buffer.from("c\r\x04") };
    }
    expect((await terminals.writeStream(more())).writes).toBe(1n);
    // Both cut streams had delivered what they sent before they ended.
    expect((await runToExit(runner.grpc, id)).output.toString()).toMatch(/^abc/);
  });

  it("ends CANCELED at once when aborted while its stream is still being opened", async () => {
    // A new runner connection: the first call waits for it to connect, and the abort comes meanwhile.
    const { terminals } = connectRunner(runner.server.url, runner.token);
    const open = openInput({ id: "none", data: Buffer.from("x") });
    const abort = new AbortController();
    try {
      const call = terminals.writeStream(open.input, { signal: abort.signal });
      abort.abort();
      const ended = await Promise.race([failureOf(call), sleep(2_000).then(() => "still open")]);
      expect(ended).toMatchObject({ code: Code.Canceled });
    } finally {
      open.end();
    }
  });

  it("is RESOURCE_EXHAUSTED for a message over the runner's limit, and the next call goes through", async () => {
    const small = await startTestRunner({ maxMessageBytes: 65536 });
    try {
      const { terminals } = connectRunner(small.server.url, small.token);
      const { terminal } = await terminals.spawn({ argv: ["cat"] });
      async function* oversized() {
        yield { id: terminal!.id, data: new Uint8Array(70_000) };
      }
      expect(await failureOf(terminals.writeStream(oversized()))).toEqual({ code: Code.ResourceExhausted, message: expect.stringMatching(/is larger than the 65536 bytes the runner accepts/) });
      async function* fine() {
        yield { id: terminal!.id, data: Buffer.from("fine") };
      }
      expect((await terminals.writeStream(fine())).writes).toBe(1n);
    } finally {
      await small.close();
    }
  });

  it("ends when the runner shuts down under an open stream, as connect's transport does, and is UNAVAILABLE when it is not there", async () => {
    const doomed = await startTestRunner();
    const { terminals } = connectRunner(doomed.server.url, doomed.token);
    const { terminal } = await terminals.spawn({ argv: ["cat"] });
    const open = openInput({ id: terminal!.id, data: Buffer.from("x") });
    const call = terminals.writeStream(open.input);
    // Once the write has landed: a write arriving after shutdown closed the terminal would be refused for that instead.
    await waitForOutput(doomed.grpc, terminal!.id, /x/);
    await doomed.close();
    // The runner lets open calls run for its grace period, then drops the connection: Node resets the stream with CANCEL.
    expect(await failureOf(call)).toMatchObject({ code: Code.Canceled });
    open.end();
    expect(await failureOf(terminals.writeStream(openInput({ id: "none", data: Buffer.from("x") }).input))).toMatchObject({ code: Code.Unavailable });
  });

  it("streams Follow's messages as they come; a reader that stops taking them holds the runner back, then gets every byte", async () => {
    const { terminals } = connectRunner(runner.server.url, runner.token);
    const { terminal } = await terminals.spawn({ command: "read go; seq 1 300000", env: { HOME: "/tmp" } });
    const id = terminal!.id;
    const requests = createWritableIterable<MessageInitShape<typeof FollowRequestSchema>>();
    void requests.write({ action: { case: "start", value: { followId: 1, attach: { id, follow: true } } } });
    const responses = terminals.follow(requests)[Symbol.asyncIterator]();
    const events: FollowEvent[] = [];
    const take = async (): Promise<boolean> => {
      const next = await responses.next();
      if (next.done) return false;
      events.push(...next.value.events);
      return events.at(-1)?.kind.case !== "end";
    };
    await terminals.write({ id, data: Buffer.from("\r") });
    await take();
    // Nothing is taken from here on: the runner must stop reading the terminal once what is in flight fills up.
    let last = -1;
    expect(await eventually(async () => last === (last = await endOffsetOf(runner.grpc, id)), 10_000)).toBe(true);
    await sleep(HELD_FLOOD_WATCH_MS);
    expect(await endOffsetOf(runner.grpc, id)).toBe(last);
    expect(last).toBeLessThan(2 * 1024 * 1024);
    while (await take());
    requests.close();
    const lines = outputOf(attachEventsOf(events)).toString().split("\r\n");
    // The echoed Enter, then every number once, in order.
    expect(lines.slice(1, -1)).toEqual(Array.from({ length: 300_000 }, (_, i) => String(i + 1)));
    expect(events.at(-1)?.kind).toEqual({ case: "end", value: expect.objectContaining({ code: 0 }) });
  });

  it("passes through the transport's interceptors, which see its headers and its answer; other methods keep the inner transport", async () => {
    const seen: string[] = [];
    const auth: Interceptor = (next) => async (request) => {
      request.header.set("authorization", `Bearer ${runner.token}`);
      const response = await next(request);
      seen.push(`${request.method.name}:${request.stream ? "stream" : "unary"}`);
      return response;
    };
    const sessionManager = new Http2SessionManager(runner.server.url);
    const inner: Transport = createGrpcTransport({ baseUrl: runner.server.url, interceptors: [auth], sessionManager });
    const frameWriters = new Map([[TerminalService.method.writeStream, writeStreamFrame as FrameWriter<never>]]);
    const client = createClient(TerminalService, withDirectStreams(inner, { baseUrl: runner.server.url, interceptors: [auth], sessionManager, frameWriters }));
    const { terminal } = await client.spawn({ argv: ["cat"] });
    async function* input() {
      yield { id: terminal!.id, data: Buffer.from("\x04") };
    }
    expect((await client.writeStream(input())).writes).toBe(1n);
    await runToExit(client, terminal!.id);
    expect(seen).toEqual(["Spawn:unary", "WriteStream:stream", "Attach:stream"]);
    sessionManager.abort();
  });
});
