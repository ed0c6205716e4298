import { context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTH_RESOURCE, tokenHolderAccess } from "../../../gateway/auth/access.js";
import type { GatewayServices, HandlerTables } from "../../../gateway/handlers/session.js";
import { ClientRegistry } from "../../../gateway/state/client-registry.js";
import { StateStore } from "../../../gateway/state/store.js";
import { Connection } from "../../../gateway/wire/connection.js";
import { createLogger } from "../../../lib/logger.js";
import { eventually } from "../../support/eventually.js";

/** A connection over an in-memory socket, dispatching to `handlers`; `sent` holds the frames it wrote, parsed. */
function connectionWith(handlers: HandlerTables) {
  const sent: Array<Record<string, any>> = [];
  const socket = { send: (frame: string) => void sent.push(JSON.parse(frame)), close() {}, terminate() {}, bufferedAmount: 0 };
  const services = { store: new StateStore(1_000), clients: new ClientRegistry(), access: tokenHolderAccess("t", AUTH_RESOURCE), log: createLogger("silent", "test") };
  return { connection: new Connection(socket, services as unknown as GatewayServices, handlers), sent };
}

/** What the slow handler takes: long enough that the requests after it are answered first, were they not queued. */
const SLOW_HANDLER_MS = 10;

describe("a connection's request dispatch", () => {
  it("answers from the tables it is handed, in arrival order, with ping at once and the handshake rule kept", async () => {
    const seen: unknown[] = [];
    const { connection, sent } = connectionWith({
      requests: {
        slow: { run: async () => (await new Promise((resolve) => setTimeout(resolve, SLOW_HANDLER_MS)), "slow"), beforeHandshake: true },
        fast: { run: () => "fast", beforeHandshake: true },
        later: { run: () => "later" },
      },
      notifications: { note: (params) => void seen.push(params) },
    });
    connection.receive('{"jsonrpc":"2.0","id":1,"method":"slow"}');
    connection.receive('{"jsonrpc":"2.0","id":2,"method":"fast"}');
    connection.receive('{"jsonrpc":"2.0","id":3,"method":"ping"}');
    connection.receive('{"jsonrpc":"2.0","id":4,"method":"later"}');
    connection.receive('{"jsonrpc":"2.0","id":5,"method":"initialize"}');
    connection.receive('{"jsonrpc":"2.0","method":"note","params":1}');
    expect(await eventually(() => sent.length === 5)).toBe(true);
    expect(sent.map((frame) => [frame.id, "result" in frame ? frame.result : frame.error.code])).toEqual([
      [3, null],
      [1, "slow"],
      [2, "fast"],
      [4, -32600],
      [5, -32601],
    ]);
    // Notifications wait for a handshake, which these tables cannot make.
    expect(seen).toEqual([]);
  });

  it("runs notifications from its tables once a handshake was made", async () => {
    const seen: unknown[] = [];
    const { connection } = connectionWith({
      requests: { hello: { run: (_params, session) => session.handshake("c", "1.1.0", true), beforeHandshake: true } },
      notifications: { note: (params) => void seen.push(params) },
    });
    connection.receive('{"jsonrpc":"2.0","id":1,"method":"hello"}');
    connection.receive('{"jsonrpc":"2.0","method":"note","params":7}');
    connection.receive('{"jsonrpc":"2.0","method":"other","params":8}');
    expect(await eventually(() => seen.length > 0)).toBe(true);
    expect(seen).toEqual([7]);
  });
});

describe("a connection's request spans", () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register());
  afterAll(() => {
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it("gives each request a server span named after its method, active while its handler runs, failed with the JSON-RPC code when refused", async () => {
    const { connection, sent } = connectionWith({
      requests: {
        work: {
          run: async () => {
            await new Promise((resolve) => setTimeout(resolve, 1));
            trace.getTracer("test").startSpan("inside").end();
            return "done";
          },
          beforeHandshake: true,
        },
      },
      notifications: {},
    });
    connection.receive('{"jsonrpc":"2.0","id":1,"method":"work"}');
    connection.receive('{"jsonrpc":"2.0","id":"b","method":"made-up"}');
    expect(await eventually(() => sent.length === 2)).toBe(true);
    const spans = exporter.getFinishedSpans();
    const work = spans.find((span) => span.name === "work")!;
    expect(work.kind).toBe(SpanKind.SERVER);
    expect(work.attributes).toMatchObject({ "rpc.system": "jsonrpc", "rpc.method": "work", "rpc.jsonrpc.request_id": "1" });
    expect(work.status.code).toBe(SpanStatusCode.UNSET);
    expect(spans.find((span) => span.name === "inside")!.parentSpanContext?.spanId).toBe(work.spanContext().spanId);
    // A method no handler serves is named "unknown": clients cannot mint span names.
    const unknown = spans.find((span) => span.name === "unknown")!;
    expect(unknown.attributes).toMatchObject({ "rpc.jsonrpc.request_id": "b", "rpc.jsonrpc.error_code": -32601 });
    expect(unknown.status.code).toBe(SpanStatusCode.ERROR);
    expect(spans.map((span) => span.name).sort()).toEqual(["inside", "unknown", "work"]);
  });
});
