import http from "node:http";
import type http2 from "node:http2";
import { createServer, type Server, type Socket } from "node:net";

/** What every HTTP/2 connection opens with (RFC 9113 §3.4); no HTTP/1.x request can begin this way. */
const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
/** How long a new connection may stay silent before it is dropped: every HTTP client speaks first, at once. */
const FIRST_BYTES_TIMEOUT_MS = 10_000;
/** How long an HTTP/1.1 request's headers may take to arrive: Node's own default, against connections that never finish them. */
export const HTTP1_HEADERS_TIMEOUT_MS = 60_000;

/** Which protocol the first bytes of a connection speak, or "undecided" while they are a proper prefix of the HTTP/2 preface. */
export function protocolFromFirstBytes(bytes: Buffer): "http2" | "http1" | "undecided" {
  const compared = Math.min(bytes.length, HTTP2_PREFACE.length);
  if (!bytes.subarray(0, compared).equals(HTTP2_PREFACE.subarray(0, compared))) return "http1";
  return bytes.length < HTTP2_PREFACE.length ? "undecided" : "http2";
}

/** One cleartext port for both HTTP versions, and the two servers behind it. */
export interface CleartextServer {
  /** The server to listen on: it only reads each connection's first bytes and hands it on. */
  server: Server;
  /** Gets connections that open with the HTTP/2 preface (h2c with prior knowledge, as gRPC clients speak). */
  http2: http2.Http2Server;
  /** Gets every other connection (Connect and gRPC-Web over HTTP/1.1, curl, browsers). */
  http1: http.Server;
}

/**
 * Serves h2c and HTTP/1.1 on one port: each accepted socket is read until its first bytes either
 * complete the HTTP/2 preface or depart from it (they may arrive in pieces), then put back and given
 * to `http2Server` or to an HTTP/1.1 server with the same request handler. HTTP/2 over cleartext
 * has no upgrade negotiation that gRPC clients use, so sniffing is the only way to share the port.
 */
export function createCleartextServer(http2Server: http2.Http2Server, onRequest: http.RequestListener): CleartextServer {
  // requestTimeout (5 minutes by default) would cut a client stream's long request body (WriteStream).
  const http1 = http.createServer({ requestTimeout: 0, headersTimeout: HTTP1_HEADERS_TIMEOUT_MS }, onRequest);
  // Node enforces headersTimeout from a timer it starts when a server listens; this one never listens itself.
  http1.emit("listening");
  const server = createServer((socket) => handOn(socket, http2Server, http1));
  server.once("close", () => http1.close());
  return { server, http2: http2Server, http1 };
}

function handOn(socket: Socket, http2Server: http2.Http2Server, http1: http.Server): void {
  let seen = Buffer.alloc(0);
  const drop = (): void => void socket.destroy();
  const onReadable = (): void => {
    for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null; ) seen = Buffer.concat([seen, chunk]);
    const protocol = protocolFromFirstBytes(seen);
    if (protocol === "undecided") return;
    socket.off("readable", onReadable).off("error", drop).off("end", drop).off("timeout", drop);
    socket.setTimeout(0);
    socket.unshift(seen);
    (protocol === "http2" ? http2Server : http1).emit("connection", socket);
  };
  socket.setTimeout(FIRST_BYTES_TIMEOUT_MS);
  socket.on("readable", onReadable).on("error", drop).on("end", drop).on("timeout", drop);
}
