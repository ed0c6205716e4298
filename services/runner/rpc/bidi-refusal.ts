import type { DescService } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

/** Connect's end-of-stream envelope flag (the message after it is JSON, whatever the codec). */
const CONNECT_END_STREAM_FLAG = 0b10;

/**
 * Answers a bidirectional-stream call that arrived over HTTP/1.x with an error its client can read,
 * and returns true; returns false for every other call. HTTP/1.1 cannot carry a request and its
 * response at once, so such a call could never work; connect's own answer is a bare HTTP 505, which
 * clients show as "[unknown] HTTP 505". This one says what to do instead, in the caller's protocol:
 * a Connect end-of-stream error, or gRPC / gRPC-Web trailers-only status headers.
 */
export function createBidiRefusal(services: readonly DescService[]): (request: IncomingMessage | Http2ServerRequest, response: ServerResponse | Http2ServerResponse) => boolean {
  const bidiPaths = new Set(services.flatMap((service) => service.methods.filter((m) => m.methodKind === "bidi_streaming").map((m) => `/${service.typeName}/${m.name}`)));
  return (request, response) => {
    if (request.httpVersionMajor !== 1) return false;
    const path = new URL(request.url ?? "/", "http://runner").pathname;
    if (!bidiPaths.has(path)) return false;
    const message = `${path.slice(1)} is a bidirectional stream and needs HTTP/2 (h2c with prior knowledge, or h2 over TLS); HTTP/1.1 carries unary, server-streaming and client-streaming calls only`;
    const contentType = request.headers["content-type"] ?? "";
    const reply = response as { writeHead(status: number, headers: Record<string, string>): unknown; end(body?: Buffer | string): unknown };
    const headers = { "content-type": contentType, connection: "close" };
    if (contentType.startsWith("application/connect+")) {
      const json = Buffer.from(JSON.stringify({ error: { code: "unimplemented", message } }));
      const envelope = Buffer.alloc(5);
      envelope.writeUInt8(CONNECT_END_STREAM_FLAG, 0);
      envelope.writeUInt32BE(json.length, 1);
      reply.writeHead(200, headers);
      reply.end(Buffer.concat([envelope, json]));
    } else if (contentType.startsWith("application/grpc")) {
      reply.writeHead(200, { ...headers, "grpc-status": String(Code.Unimplemented), "grpc-message": encodeURIComponent(message) });
      reply.end();
    } else {
      reply.writeHead(505, { "content-type": "text/plain; charset=utf-8", connection: "close" });
      reply.end(`${message}\n`);
    }
    return true;
  };
}
