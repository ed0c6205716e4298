import http from "node:http";
import type http2 from "node:http2";
import type { Socket } from "node:net";

/** What every HTTP/2 connection opens with (RFC 9113 §3.4); no HTTP/1.x request can begin this way. */
const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
/** How often, at most, Node looks for HTTP/1.1 requests whose headers are late (its default, 30 s, would stretch a short timeout). */
const MAX_HEADERS_CHECK_INTERVAL_MS = 1_000;

/** Which protocol the first bytes of a connection speak, or "undecided" while they are a proper prefix of the HTTP/2 preface. */
export function protocolFromFirstBytes(bytes: Buffer): "http2" | "http1" | "undecided" {
  const compared = Math.min(bytes.length, HTTP2_PREFACE.length);
  if (!bytes.subarray(0, compared).equals(HTTP2_PREFACE.subarray(0, compared))) return "http1";
  return bytes.length < HTTP2_PREFACE.length ? "undecided" : "http2";
}

/** One cleartext port for both HTTP versions, and the two servers behind it. */
export interface CleartextServer {
  /** Takes a connection accepted on the port: reads its first bytes and hands it on. */
  accept(socket: Socket): void;
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
 * A connection gets `handshakeTimeoutMs` to say which it speaks, and an HTTP/1.1 request as long
 * again for its headers; close `http1` when the port closes.
 */
export function createCleartextServer(http2Server: http2.Http2Server, onRequest: http.RequestListener, handshakeTimeoutMs: number): CleartextServer {
  // requestTimeout (5 minutes by default) would cut a client stream's long request body (WriteStream).
  const http1 = http.createServer({ requestTimeout: 0, ...http1HeadersTimeout(handshakeTimeoutMs) }, onRequest);
  // Node enforces headersTimeout from a timer it starts when a server listens; this one never listens itself.
  http1.emit("listening");
  return { accept: (socket) => handOn(socket, http2Server, http1, handshakeTimeoutMs), http2: http2Server, http1 };
}

/** Node's options that refuse an HTTP/1.1 request whose headers take longer than `timeoutMs`. */
export function http1HeadersTimeout(timeoutMs: number): { headersTimeout: number; connectionsCheckingInterval: number } {
  return { headersTimeout: timeoutMs, connectionsCheckingInterval: Math.min(MAX_HEADERS_CHECK_INTERVAL_MS, Math.max(1, Math.floor(timeoutMs / 4))) };
}

function handOn(socket: Socket, http2Server: http2.Http2Server, http1: http.Server, timeoutMs: number): void {
  let seen = Buffer.alloc(0);
  const drop = (): void => void socket.destroy();
  // A deadline, not an inactivity timeout: a client sending a byte now and then gets no longer.
  const deadline = setTimeout(drop, timeoutMs);
  const onReadable = (): void => {
    for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null; ) seen = Buffer.concat([seen, chunk]);
    const protocol = protocolFromFirstBytes(seen);
    if (protocol === "undecided") return;
    socket.off("readable", onReadable).off("error", drop).off("end", drop).off("close", stop);
    clearTimeout(deadline);
    socket.unshift(seen);
    (protocol === "http2" ? http2Server : http1).emit("connection", socket);
  };
  const stop = (): void => clearTimeout(deadline);
  socket.on("readable", onReadable).on("error", drop).on("end", drop).on("close", stop);
}
