import { fromBinary, fromJsonString, type DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";

/** Bytes of the length-prefixed framing gRPC, gRPC-Web and Connect streams put before each message: a flags byte and a 32-bit length. */
const ENVELOPE_HEADER_BYTES = 5;
/** The flag of a compressed message (the runner accepts no compression; such a message is left for the protocol layer to refuse). */
const COMPRESSED_FLAG = 0b1;

/**
 * Makes every handler refuse a request whose body does not parse as its message with
 * INVALID_ARGUMENT and a message naming only the expected type. Without it, connect answers a
 * malformed protobuf body with INTERNAL carrying the parser's own words (and a malformed JSON body
 * with the JSON parser's), which tells a caller about the runner's inside and blames the runner for
 * the caller's mistake. The body still reaches connect unchanged; each message is checked on its way.
 */
export function refuseMalformedBodies(handlers: UniversalHandler[]): void {
  for (const [index, handler] of handlers.entries()) {
    const checked = (request: UniversalServerRequest) => handler(withCheckedBody(request, handler.method.input));
    handlers[index] = Object.assign(checked, handler);
  }
}

function withCheckedBody(request: UniversalServerRequest, schema: DescMessage): UniversalServerRequest {
  const { body } = request;
  if (!isByteStream(body)) return request;
  const contentType = (request.header.get("content-type") ?? "").toLowerCase();
  const json = /[+/]json\b/.test(contentType);
  const enveloped = /^application\/(grpc|grpc-web|connect\+)/.test(contentType);
  const check = (bytes: Uint8Array): void => {
    try {
      if (json) fromJsonString(schema, new TextDecoder("utf-8", { fatal: true }).decode(bytes), { ignoreUnknownFields: true });
      else fromBinary(schema, bytes);
    } catch {
      throw new ConnectError(`the request body is not a valid ${schema.typeName}`, Code.InvalidArgument);
    }
  };
  return { ...request, body: enveloped ? checkEnvelopes(body, check) : checkWhole(body, check) };
}

/** Passes a stream of enveloped messages on, checking each complete message as it goes by. */
async function* checkEnvelopes(body: AsyncIterable<Uint8Array>, check: (message: Uint8Array) => void): AsyncIterable<Uint8Array> {
  let pending: Uint8Array = new Uint8Array(0);
  for await (const chunk of body) {
    pending = pending.length === 0 ? chunk : concat(pending, chunk);
    while (pending.length >= ENVELOPE_HEADER_BYTES) {
      const length = new DataView(pending.buffer, pending.byteOffset, pending.byteLength).getUint32(1);
      if (pending.length < ENVELOPE_HEADER_BYTES + length) break;
      if ((pending[0]! & COMPRESSED_FLAG) === 0) check(pending.subarray(ENVELOPE_HEADER_BYTES, ENVELOPE_HEADER_BYTES + length));
      pending = pending.subarray(ENVELOPE_HEADER_BYTES + length);
    }
    yield chunk;
  }
}

/** Passes a unary body on, checking it whole once it has all arrived (before connect, which reads it whole too, parses it). */
async function* checkWhole(body: AsyncIterable<Uint8Array>, check: (message: Uint8Array) => void): AsyncIterable<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) {
    chunks.push(chunk);
    yield chunk;
  }
  check(chunks.reduce(concat, new Uint8Array(0)));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

function isByteStream(body: UniversalServerRequest["body"]): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}
