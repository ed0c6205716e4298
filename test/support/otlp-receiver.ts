import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { BinaryReader } from "@bufbuild/protobuf/wire";

/** One span as an OTLP receiver got it, whichever encoding carried it. */
export interface ReceivedSpan {
  /** The service.name of the resource it came with. */
  service: string;
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

/** A running OTLP/HTTP trace receiver. */
export interface OtlpReceiver {
  /** Its base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** The Content-Type of every export request, in arrival order. */
  contentTypes: string[];
  close(): Promise<void>;
}

/**
 * Starts an OTLP/HTTP receiver on a free loopback port: it takes POST /v1/traces in http/protobuf
 * and http/json (gzip or not), decodes the spans, and answers as a collector does.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      const type = request.headers["content-type"] ?? "";
      if (request.method !== "POST" || request.url !== "/v1/traces") return void response.writeHead(404).end();
      contentTypes.push(type);
      if (type.startsWith("application/json")) {
        spans.push(...spansFromJson(JSON.parse(body.toString("utf8"))));
        return void response.writeHead(200, { "content-type": "application/json" }).end("{}");
      }
      if (type.startsWith("application/x-protobuf")) {
        spans.push(...spansFromProtobuf(body));
        return void response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      }
      response.writeHead(415).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return request.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
}

type JsonValue = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
type JsonAttribute = { key: string; value: JsonValue };

function attributesFromJson(list: JsonAttribute[] = []): ReceivedSpan["attributes"] {
  const entries = list.map(({ key, value }) => [key, value.stringValue ?? value.boolValue ?? (value.intValue === undefined ? value.doubleValue : Number(value.intValue))]);
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
}

/** Spans of an ExportTraceServiceRequest in OTLP/JSON (ids as hex strings). */
function spansFromJson(request: any): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans: any) => {
    const service = String(attributesFromJson(resourceSpans.resource?.attributes)["service.name"]);
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans: any) =>
      (scopeSpans.spans ?? []).map(
        (span: any): ReceivedSpan => ({
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? "",
          name: span.name,
          kind: span.kind,
          attributes: attributesFromJson(span.attributes),
          statusCode: span.status?.code ?? 0,
        }),
      ),
    );
  });
}

/** Calls `visit` for each field of a protobuf message; fields it does not take (returns false for) are skipped. */
function eachField(bytes: Uint8Array, visit: (field: number, reader: BinaryReader) => boolean): void {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (!visit(field, reader)) reader.skip(wireType, field);
  }
}

/** Field numbers of opentelemetry/proto/collector/trace/v1 and the messages it holds. */
const FIELD = {
  request: { resourceSpans: 1 },
  resourceSpans: { resource: 1, scopeSpans: 2 },
  resource: { attributes: 1 },
  scopeSpans: { spans: 2 },
  span: { traceId: 1, spanId: 2, parentSpanId: 4, name: 5, kind: 6, attributes: 9, status: 15 },
  status: { code: 3 },
  keyValue: { key: 1, value: 2 },
  anyValue: { string: 1, bool: 2, int: 3, double: 4 },
} as const;

function keyValueFromProtobuf(bytes: Uint8Array): [string, string | number | boolean | undefined] {
  let key = "";
  let value: string | number | boolean | undefined;
  eachField(bytes, (field, reader) => {
    if (field === FIELD.keyValue.key) key = reader.string();
    else if (field === FIELD.keyValue.value) {
      eachField(reader.bytes(), (kind, inner) => {
        if (kind === FIELD.anyValue.string) value = inner.string();
        else if (kind === FIELD.anyValue.bool) value = inner.bool();
        else if (kind === FIELD.anyValue.int) value = Number(inner.int64());
        else if (kind === FIELD.anyValue.double) value = inner.double();
        else return false;
        return true;
      });
    } else return false;
    return true;
  });
  return [key, value];
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

function spanFromProtobuf(bytes: Uint8Array, service: string): ReceivedSpan {
  const span: ReceivedSpan = { service, traceId: "", spanId: "", parentSpanId: "", name: "", kind: 0, attributes: {}, statusCode: 0 };
  eachField(bytes, (field, reader) => {
    if (field === FIELD.span.traceId) span.traceId = hex(reader.bytes());
    else if (field === FIELD.span.spanId) span.spanId = hex(reader.bytes());
    else if (field === FIELD.span.parentSpanId) span.parentSpanId = hex(reader.bytes());
    else if (field === FIELD.span.name) span.name = reader.string();
    else if (field === FIELD.span.kind) span.kind = reader.int32();
    else if (field === FIELD.span.attributes) {
      const [key, value] = keyValueFromProtobuf(reader.bytes());
      if (value !== undefined) span.attributes[key] = value;
    } else if (field === FIELD.span.status) {
      eachField(reader.bytes(), (inner, status) => inner === FIELD.status.code && ((span.statusCode = status.int32()), true));
    } else return false;
    return true;
  });
  return span;
}

/** Spans of an ExportTraceServiceRequest in OTLP/protobuf, read field by field off the wire format. */
function spansFromProtobuf(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  eachField(body, (field, reader) => {
    if (field !== FIELD.request.resourceSpans) return false;
    const scopes: Uint8Array[] = [];
    let service = "";
    eachField(reader.bytes(), (inner, resourceSpans) => {
      if (inner === FIELD.resourceSpans.resource) {
        eachField(resourceSpans.bytes(), (attribute, resource) => {
          if (attribute !== FIELD.resource.attributes) return false;
          const [key, value] = keyValueFromProtobuf(resource.bytes());
          if (key === "service.name") service = String(value);
          return true;
        });
      } else if (inner === FIELD.resourceSpans.scopeSpans) scopes.push(resourceSpans.bytes());
      else return false;
      return true;
    });
    for (const scope of scopes) {
      eachField(scope, (inner, scopeSpans) => inner === FIELD.scopeSpans.spans && (spans.push(spanFromProtobuf(scopeSpans.bytes(), service)), true));
    }
    return true;
  });
  return spans;
}
