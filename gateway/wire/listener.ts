import http from "node:http";
import https from "node:https";
import type { TlsOptions } from "node:tls";
import type { Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { listen } from "../../lib/listen.js";
import type { Logger } from "../../lib/logger.js";
import { sameSecret } from "../../lib/same-secret.js";
import type { SocketLike } from "./connection-socket.js";
import { ConnectionGate } from "./connection-gate.js";
import { corkForTurn } from "./turn-cork.js";
import { createHostGuard } from "./host-guard.js";
import { PeerLiveness } from "./peer-liveness.js";
import { RateLimitedLog } from "../../lib/rate-limited-log.js";
import type { SocketLimits } from "./socket-limits.js";

/** What the listener hands each accepted socket to, and gets back: where its frames go and what to do when it closes. */
export interface SocketHandlers {
  onFrame(text: string): void;
  onClose(): void;
}

/** An answer to a plain HTTP request: status, body and any headers beyond the defaults (plain text, nosniff). */
export interface HttpReply {
  status: number;
  body: string | Buffer;
  headers?: Record<string, string>;
}

/** Where to listen, the connection token, the largest frame accepted, and who takes accepted sockets. */
export interface ListenerOptions {
  host: string;
  port: number;
  token: string;
  maxFrameBytes: number;
  /** Deadlines, pings and connection counts (`initializeTimeoutMs` is the connection's, not the listener's). */
  limits: Omit<SocketLimits, "initializeTimeoutMs">;
  /** Host names besides loopback names, addresses and the bound host (`--allowed-hosts`). */
  allowedHosts: readonly string[];
  /** Origins of pages besides the gateway's own (`--allowed-origins`). */
  allowedOrigins: readonly string[];
  log: Logger;
  accept(socket: SocketLike): SocketHandlers;
  /** TLS options: serve https and wss instead of http and ws (with `ca` and `requestCert`, clients need certificates). */
  tls?: TlsOptions;
  /** Plain HTTP GET (and HEAD) routes served without the token: health probes and the console's static files. */
  routes?: Record<string, () => Promise<HttpReply>>;
}

/** A listening gateway: its WebSocket URL (with the token) and a way to stop it. */
export interface Listener {
  url: string;
  port: number;
  /** Stops accepting and closes every socket with 1001 (going away). */
  close(): Promise<void>;
}

/** Headers every plain HTTP answer starts from; one request per connection, so a connection's deadline covers all it does. */
const PLAIN_TEXT = { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff", connection: "close" };

/** WebSocket close code when the gateway shuts down. */
const CLOSE_GOING_AWAY = 1001;
/** What a client refused for too many connections is told to wait: about as long as an idle socket gets before it is closed. */
const RETRY_AFTER_SECONDS = 5;
/** How long a refused connection may stay to read its 503 before it is dropped. */
const REFUSED_LINGER_MS = 1_000;

/**
 * The gateway's HTTP server and WebSocket endpoint (any path). Every connection passes, in order:
 * the connection limits (503 with Retry-After), its headers' deadline (closed), the Host and
 * Origin rule (403), then the connection token at the upgrade, as `?tkn=` (all VS Code can send)
 * or `Authorization: Bearer` (401), before any JSON-RPC. Frames above `maxFrameBytes` close the
 * socket with 1009; WebSockets are pinged, and dropped when their peer is gone.
 */
export async function startListener(options: ListenerOptions): Promise<Listener> {
  const { limits, log } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxFrameBytes, perMessageDeflate: false });
  const gate = new ConnectionGate(limits, log);
  const guard = createHostGuard({ allowedHosts: options.allowedHosts, allowedOrigins: options.allowedOrigins, boundHost: options.host });
  const warnings = new RateLimitedLog(log);
  // The first check every request passes: the limits, then Host and Origin; the answer when it fails.
  const screen = (request: http.IncomingMessage): { status: number; body: string } | undefined => {
    const refusal = gate.headersArrived(request.socket);
    if (refusal) return { status: 503, body: `Too many connections: ${refusal}. Try again later.\n` };
    const misdirected = guard(request.headers);
    if (!misdirected) return undefined;
    warnings.warn("host", { address: request.socket.remoteAddress, host: request.headers.host, origin: request.headers.origin }, `refused a request: ${misdirected}`);
    return { status: 403, body: `Forbidden: ${misdirected}.\n` };
  };
  const onRequest = (request: http.IncomingMessage, response: http.ServerResponse): void => {
    if (request.socket.writableEnded) return void request.socket.destroy();
    const refused = screen(request);
    if (refused) return void response.writeHead(refused.status, refusalHeaders(refused.status)).end(refused.body);
    const path = new URL(request.url ?? "/", "http://gateway").pathname;
    const readOnly = request.method === "GET" || request.method === "HEAD";
    const route = readOnly && options.routes && Object.hasOwn(options.routes, path) ? options.routes[path] : undefined;
    if (!route) {
      response.writeHead(426, { ...PLAIN_TEXT, upgrade: "websocket" });
      response.end("This is an Agent Host Protocol endpoint: connect with a WebSocket.\n");
      return;
    }
    route().then(
      ({ status, body, headers }) => {
        response.writeHead(status, { ...PLAIN_TEXT, "content-length": Buffer.byteLength(body), ...headers });
        response.end(request.method === "HEAD" ? undefined : body);
      },
      () => response.writeHead(500, PLAIN_TEXT).end("error\n"),
    );
  };
  const server = options.tls ? https.createServer({ ...options.tls, handshakeTimeout: limits.headersTimeoutMs }, onRequest) : http.createServer(onRequest);
  // A plain request's connection that goes quiet (a response nobody reads) is closed; upgraded sockets are exempt (ws clears it).
  server.timeout = limits.headersTimeoutMs;
  server.on("connection", (socket: Socket) => {
    const refusal = gate.admit(socket);
    // Over TLS the answer waits for the request; in the clear it goes at once, and the socket soon after.
    if (refusal && !options.tls && !socket.destroyed) {
      socket.end(rawReply(503, `Too many connections: ${refusal}. Try again later.\n`, refusalHeaders(503)));
      // A fresh socket's send buffer takes the answer at once, so closing now still delivers it.
      if (!gate.refusedMayLinger()) return void socket.destroy();
      socket.resume();
      setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
    }
  });
  server.on("upgrade", (request: http.IncomingMessage, socket: Socket, head: Buffer) => {
    if (socket.writableEnded) return void socket.destroy();
    const refused = screen(request);
    if (refused) return void socket.end(rawReply(refused.status, refused.body, refusalHeaders(refused.status)));
    const tokenProblem = connectionTokenProblem(request, options.token);
    if (tokenProblem) {
      warnings.warn("token", { address: request.socket.remoteAddress, reason: tokenProblem }, "refused a WebSocket: missing or wrong connection token");
      return void socket.end(rawReply(401, "missing or wrong connection token\n", PLAIN_TEXT));
    }
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, socket, options));
  });
  const { host, port } = await listen(server, options.port, options.host);
  // Once listening, accept errors other than running out of descriptors (which libuv absorbs by itself)
  // must not end the process; a failure to listen is the caller's to report.
  server.on("error", (err: NodeJS.ErrnoException) => warnings.warn(`accept-${err.code}`, { code: err.code }, `could not accept a connection: ${err.message}`));
  return {
    url: `${options.tls ? "wss" : "ws"}://${host}:${port}/?tkn=${encodeURIComponent(options.token)}`,
    port,
    async close() {
      for (const ws of wss.clients) ws.close(CLOSE_GOING_AWAY, "gateway shutting down");
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      gate.destroyWaiting();
      server.closeAllConnections();
      await closed;
    },
  };
}

function serve(ws: WebSocket, socket: Socket, options: ListenerOptions): void {
  const corkTurn = corkForTurn(socket);
  const handlers = options.accept({
    send: (frame, onWritten) => {
      corkTurn();
      ws.send(frame, onWritten);
    },
    close: (code, reason) => ws.close(code, reason),
    terminate: () => ws.terminate(),
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    remoteAddress: socket.remoteAddress,
  });
  const liveness = new PeerLiveness(
    {
      ping: (flushed) => ws.ping(undefined, undefined, flushed),
      get bytesTaken() {
        return socket.bytesWritten - socket.writableLength;
      },
      terminate: () => ws.terminate(),
    },
    options.limits,
    (silentMs) => options.log.info({ address: socket.remoteAddress, silentMs, unsent: ws.bufferedAmount }, "dropped a WebSocket whose peer neither answered a ping nor read (--pong-timeout-ms)"),
  );
  socket.on("data", () => liveness.heard());
  // Binary frames are read as UTF-8 JSON too, as the official client does; replies are always text.
  ws.on("message", (data: Buffer) => handlers.onFrame(data.toString("utf8")));
  ws.on("close", () => {
    liveness.stop();
    handlers.onClose();
  });
  // ws closes the socket itself on protocol errors (1009 for an oversized frame); the event only needs a listener.
  ws.on("error", () => {});
}

/** Why the upgrade does not carry the connection token (`?tkn=` or `Authorization: Bearer`): "no token", "wrong token", or undefined when it does. */
function connectionTokenProblem(request: http.IncomingMessage, token: string): string | undefined {
  const query = new URL(request.url ?? "/", "http://gateway").searchParams.get("tkn");
  const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "")?.[1];
  const given = [query, bearer].filter((value): value is string => value !== null && value !== undefined);
  if (given.length === 0) return "no token";
  return given.some((value) => sameSecret(value, token)) ? undefined : "wrong token";
}

/** Headers of a refusal: a 503 says when to come back. */
function refusalHeaders(status: number): Record<string, string> {
  return status === 503 ? { ...PLAIN_TEXT, "retry-after": String(RETRY_AFTER_SECONDS) } : PLAIN_TEXT;
}

/** A whole HTTP/1.1 response, for a socket no HTTP response object stands for (a refused or unauthorised upgrade). */
function rawReply(status: number, body: string, headers: Record<string, string>): string {
  const lines = Object.entries({ ...headers, "content-length": String(Buffer.byteLength(body)) }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${lines.join("")}\r\n${body}`;
}
