import type { IncomingMessage, ServerResponse } from "node:http";
import http2 from "node:http2";
import { createServer, type Server, type Socket } from "node:net";
import type { TlsOptions } from "node:tls";
import { createCleartextServer, http1HeadersTimeout } from "../../../lib/cleartext-server.js";
import type { Logger } from "../../../lib/logger.js";
import { RateLimitedLog } from "../../../lib/rate-limited-log.js";
import { ConnectionAdmission, type ConnectionCounts } from "./connection-admission.js";
import type { DescriptorLimit } from "../process/descriptor-limit.js";
import { watchSession, type SessionTimeouts, type SessionWatch } from "./session-timeouts.js";

/**
 * Memory one HTTP/2 connection may hold, in MB (Node's default is 10). A gateway carries every
 * terminal's Attach and input streams on one connection, each with up to a 64 KiB window of output in
 * flight; past the limit Node refuses new streams (ENHANCE_YOUR_CALM), so it must fit a full runner.
 */
const SESSION_MEMORY_MB = 512;
/** Receive windows for what callers send (input, pastes): the whole connection's, and each stream's. HTTP/2 starts both at 64 KiB. */
const CONNECTION_WINDOW_BYTES = 16 * 1024 * 1024;
const STREAM_WINDOW_BYTES = 1024 * 1024;

/** What the runner allows each connection: how many, and how long to start and to idle. */
export interface ConnectionPolicy extends ConnectionCounts, SessionTimeouts {}

/** A request handler for both HTTP versions. */
export type RequestHandler = (request: IncomingMessage | http2.Http2ServerRequest, response: ServerResponse | http2.Http2ServerResponse) => void;

/** How the runner's port is to serve. */
export interface ListenerOptions {
  policy: ConnectionPolicy;
  /** TLS (h2 by ALPN, and HTTP/1.1) instead of cleartext (h2c, and HTTP/1.1). */
  tls: TlsOptions | undefined;
  /** Whether a request's Authorization header carries the runner's token (its session may then idle on PINGs). */
  carriesToken: (authorization: string | undefined) => boolean;
  /** Turns connections away before they take the descriptors terminals need. */
  descriptors: DescriptorLimit;
  log: Logger;
}

/** The runner's port before it listens, and what shutdown needs of it. */
export interface RunnerListener {
  /** The server to listen on. */
  server: Server;
  /** Open HTTP/2 sessions, to send GOAWAY at shutdown. */
  sessions: ReadonlySet<http2.ServerHttp2Session>;
  /** Open connections, to destroy what lingers at shutdown. */
  sockets: ReadonlySet<Socket>;
  /** Stops the HTTP/1.1 servers' timers once the port is closed. */
  close(): void;
}

/**
 * One port for every way of calling the runner: each accepted connection is counted (and refused
 * over --max-connections or --max-connections-per-address, or when it would leave too few file
 * descriptors for terminals), then handed to TLS (h2 or HTTP/1.1 as
 * ALPN settles) or, in cleartext, to h2c or HTTP/1.1 by its first bytes. Every step of a
 * connection's start (first bytes or TLS handshake; then the HTTP/2 preface and SETTINGS, or each
 * HTTP/1.1 request's headers) gets `handshakeTimeoutMs`; an HTTP/2 connection without calls is closed
 * after `idleTimeoutMs` (session-timeouts.ts). When accepting fails (out of descriptors), a warning is
 * logged and the connections already open carry on.
 */
export function createRunnerListener(handle: RequestHandler, { policy, tls, carriesToken, descriptors, log }: ListenerOptions): RunnerListener {
  const http2Options: http2.ServerOptions = { maxSessionMemory: SESSION_MEMORY_MB, settings: { initialWindowSize: STREAM_WINDOW_BYTES } };
  const sessions = new Set<http2.ServerHttp2Session>();
  const watches = new WeakMap<http2.Http2Session, SessionWatch>();
  const sockets = new Set<Socket>();
  const admission = new ConnectionAdmission(policy, descriptors, log);
  const onRequest: RequestHandler = (request, response) => {
    const session = "stream" in request ? request.stream.session : undefined;
    if (session && carriesToken(request.headers.authorization)) watches.get(session)?.authenticated();
    handle(request, response);
  };
  const { accept, sessionsFrom, close } = tls ? secureRoute(onRequest, http2Options, policy.handshakeTimeoutMs, tls, log) : cleartextRoute(onRequest, http2Options, policy.handshakeTimeoutMs);
  const server = createServer((socket) => {
    if (!admission.admit(socket)) return;
    // Keystrokes and their echoes are tiny writes: Nagle's algorithm would hold them back.
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    accept(socket);
  });
  // libuv closes connections it cannot accept (EMFILE) by itself; it reports only when even that fails.
  const acceptFailed = new RateLimitedLog(log).warning("cannot accept connections; connections already open carry on");
  // Errors before the port listens (EADDRINUSE) are the caller of listen()'s; later ones come from accept().
  server.on("error", (err: NodeJS.ErrnoException) => server.listening && acceptFailed({ code: err.code, connections: admission.size }));
  sessionsFrom.on("session", (session) => {
    sessions.add(session);
    session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
    session.on("close", () => sessions.delete(session));
    watches.set(session, watchSession(session, policy));
  });
  return { server, sessions, sockets, close };
}

interface Route {
  accept(socket: Socket): void;
  sessionsFrom: http2.Http2Server | http2.Http2SecureServer;
  close(): void;
}

function cleartextRoute(onRequest: RequestHandler, http2Options: http2.ServerOptions, handshakeTimeoutMs: number): Route {
  const cleartext = createCleartextServer(http2.createServer(http2Options, onRequest), onRequest, handshakeTimeoutMs);
  return { accept: cleartext.accept, sessionsFrom: cleartext.http2, close: () => cleartext.http1.close() };
}

function secureRoute(onRequest: RequestHandler, http2Options: http2.ServerOptions, handshakeTimeoutMs: number, tls: TlsOptions, log: Logger): Route {
  // ALPN picks h2 or http/1.1; a client that offers neither gets HTTP/1.1.
  const secure = http2.createSecureServer({ ...http2Options, ...tls, allowHTTP1: true, handshakeTimeout: handshakeTimeoutMs }, onRequest);
  // Node's own HTTP/1.1 limits here would cut a client stream's body after 5 minutes and allow headers 60 s.
  Object.assign(secure, { requestTimeout: 0, ...http1HeadersTimeout(handshakeTimeoutMs) });
  // Node enforces those from a timer it starts when the server listens; the runner's port listens in its place.
  secure.emit("listening");
  // Refused handshakes (no or untrusted client certificate, plain HTTP on the TLS port, too slow) close the socket.
  secure.on("tlsClientError", (err, socket) => log.debug({ err: err.message, address: socket.remoteAddress }, "TLS handshake refused"));
  return { accept: (socket) => secure.emit("connection", socket), sessionsFrom: secure, close: () => secure.close() };
}
