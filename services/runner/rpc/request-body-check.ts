import { fromBinary, fromJsonString, type DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { gateEnvelopes, gateWholeBody } from "./message-size-gate.js";
import { wrapHandlers } from "./wrapped-handlers.js";

/**
 * Makes every handler check each request message on its way in, before connect sees it:
 *
 * - a message larger than `maxMessageBytes` is RESOURCE_EXHAUSTED on its own call, decided from its
 *   length prefix (or Content-Length) without keeping any of it, and answered once the caller has
 *   sent it (message-size-gate.ts says why), so the connection goes on serving every other call;
 * - a message that does not parse as the method's input is INVALID_ARGUMENT naming only the expected
 *   type. Without this, connect answers a malformed protobuf body with INTERNAL carrying the parser's
 *   own words (and a malformed JSON body with the JSON parser's), which tells a caller about the
 *   runner's inside and blames the runner for the caller's mistake.
 *
 * Messages that pass reach connect unchanged. The runner's direct methods over binary gRPC
 * (direct-grpc.ts) wrap this check and do the same where they read their messages.
 */
export function checkRequestBodies(handlers: UniversalHandler[], maxMessageBytes: number): void {
  wrapHandlers(handlers, (handler) => (request) => handler(withCheckedBody(request, handler.method.input, maxMessageBytes)));
}

function withCheckedBody(request: UniversalServerRequest, schema: DescMessage, maxMessageBytes: number): UniversalServerRequest {
  const { body } = request;
  if (!isByteStream(body)) return request;
  const contentType = (request.header.get("content-type") ?? "").toLowerCase();
  const json = isJsonContentType(contentType);
  const check = (bytes: Uint8Array): void => {
    try {
      if (json) fromJsonString(schema, new TextDecoder("utf-8", { fatal: true }).decode(bytes), { ignoreUnknownFields: true });
      else fromBinary(schema, bytes);
    } catch {
      throw invalidBody(schema);
    }
  };
  if (/^application\/(grpc|grpc-web|connect\+)/.test(contentType)) return { ...request, body: gateEnvelopes(body, maxMessageBytes, check) };
  const declared = request.header.get("content-length");
  const declaredBytes = declared === null || !/^\d+$/.test(declared) ? undefined : Number(declared);
  if (declaredBytes === undefined || declaredBytes <= maxMessageBytes) return { ...request, body: gateWholeBody(body, maxMessageBytes, declaredBytes, check) };
  // Connect would refuse a Content-Length over its limit before reading a byte; the gate reads the body first.
  const header = new Headers(request.header);
  header.delete("content-length");
  return { ...request, header, body: gateWholeBody(body, maxMessageBytes, declaredBytes, check) };
}

/** The refusal of a request message that does not parse as `schema`: it names the expected type and nothing of the parser's words. */
export function invalidBody(schema: DescMessage): ConnectError {
  return new ConnectError(`the request body is not a valid ${schema.typeName}`, Code.InvalidArgument);
}

function isByteStream(body: UniversalServerRequest["body"]): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

/** Whether a request's content type says its messages are JSON (Connect's `application/json`, `application/connect+json`, gRPC's `application/grpc+json`). */
export function isJsonContentType(contentType: string | null): boolean {
  return /[+/]json\b/i.test(contentType ?? "");
}
