import { Code, ConnectError } from "@connectrpc/connect";
import { ROOT_CONTEXT, SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { tracedCall } from "../../../lib/rpc-spans.js";

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("test");

/** The spans ended so far, as code attribute and status, cleared for the next check. */
function ended(): Array<{ code: unknown; status: SpanStatusCode }> {
  const spans = exporter.getFinishedSpans().map((span) => ({ code: span.attributes["rpc.grpc.status_code"], status: span.status.code }));
  exporter.reset();
  return spans;
}

async function* messages(count: number, failWith?: Error): AsyncGenerator<number> {
  for (let i = 0; i < count; i++) yield i;
  if (failWith) throw failWith;
}

describe("tracedCall", () => {
  it("ends a unary call's span with its code: server spans fail only for the server's faults, client spans for any code but CANCELED", async () => {
    const unary = { stream: false as const, message: "reply" };
    expect(await tracedCall(tracer.startSpan("ok"), ROOT_CONTEXT, "server", async () => unary)).toBe(unary);
    const refuse = (side: "server" | "client", code: Code) => tracedCall(tracer.startSpan("refused"), ROOT_CONTEXT, side, () => Promise.reject(new ConnectError("no", code)));
    await expect(refuse("server", Code.NotFound)).rejects.toThrow("no");
    await expect(refuse("server", Code.Internal)).rejects.toThrow("no");
    await expect(refuse("client", Code.NotFound)).rejects.toThrow("no");
    await expect(refuse("client", Code.Canceled)).rejects.toThrow("no");
    expect(ended()).toEqual([
      { code: 0, status: SpanStatusCode.UNSET },
      { code: Code.NotFound, status: SpanStatusCode.UNSET },
      { code: Code.Internal, status: SpanStatusCode.ERROR },
      { code: Code.NotFound, status: SpanStatusCode.ERROR },
      { code: Code.Canceled, status: SpanStatusCode.UNSET },
    ]);
  });

  it("ends a stream's span once, when its messages run out, and hands every message on", async () => {
    const response = await tracedCall(tracer.startSpan("stream"), ROOT_CONTEXT, "server", async () => ({ stream: true as const, message: messages(3) }));
    expect(ended()).toEqual([]);
    const seen: number[] = [];
    for await (const message of response.message) seen.push(message);
    expect(seen).toEqual([0, 1, 2]);
    expect(ended()).toEqual([{ code: 0, status: SpanStatusCode.UNSET }]);
  });

  it("ends a stream's span with the code it failed with, or CANCELED when its reader stops early", async () => {
    const failing = await tracedCall(tracer.startSpan("failing"), ROOT_CONTEXT, "server", async () => ({
      stream: true as const,
      message: messages(1, new ConnectError("gone", Code.Unavailable)),
    }));
    const drain = async (): Promise<void> => {
      for await (const _ of failing.message);
    };
    await expect(drain()).rejects.toThrow("gone");
    const abandoned = await tracedCall(tracer.startSpan("abandoned"), ROOT_CONTEXT, "client", async () => ({ stream: true as const, message: messages(5) }));
    for await (const message of abandoned.message) if (message === 1) break;
    expect(ended()).toEqual([
      { code: Code.Unavailable, status: SpanStatusCode.ERROR },
      { code: Code.Canceled, status: SpanStatusCode.UNSET },
    ]);
  });
});
