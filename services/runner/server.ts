import { setMaxListeners } from "node:events";
import http2 from "node:http2";
import type { Socket } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { Code, ConnectError, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { listen } from "../../lib/listen.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { createBearerAuth } from "./auth.js";
import { createHealthService, type ServingState } from "./health-service.js";
import type { Logger } from "../../lib/logger.js";
import type { RunnerMetrics } from "./metrics.js";
import { createTerminalService } from "./terminal-service.js";
import type { TerminalRegistry } from "./terminal-registry.js";

/**
 * Memory one HTTP/2 connection may hold, in MB (Node's default is 10). A gateway carries every
 * terminal's Attach and input streams on one connection, each with up to a 64 KiB window of output in
 * flight; past the limit Node refuses new streams (ENHANCE_YOUR_CALM), so it must fit a full runner.
 */
const SESSION_MEMORY_MB = 512;
/** Receive windows for what callers send (input, pastes): the whole connection's, and each stream's. HTTP/2 starts both at 64 KiB. */
const CONNECTION_WINDOW_BYTES = 16 * 1024 * 1024;
const STREAM_WINDOW_BYTES = 1024 * 1024;
/** Largest RPC message either way: a 1 MiB paste fits many times over, a runaway client does not. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** How long calls still in flight get after GOAWAY before their connections are destroyed. */
const SESSION_CLOSE_GRACE_MS = 2_000;

/** Where and how the runner serves. `token` undefined means no authentication (`--insecure`). */
export interface RunnerServerOptions {
  host: string;
  port: number;
  token: string | undefined;
  registry: TerminalRegistry;
  serving: ServingState;
  heartbeatMs: number;
  log: Logger;
  metrics?: RunnerMetrics;
}

/** A listening runner: its base URL and a way to stop it. */
export interface RunnerServer {
  url: string;
  port: number;
  /** Stops accepting, ends streams with UNAVAILABLE, sends GOAWAY, and destroys sessions that linger. */
  close(): Promise<void>;
}

/** Serves TerminalService and grpc.health.v1 over h2c, answering gRPC, gRPC-Web and Connect on the same port. */
export async function startRunnerServer(options: RunnerServerOptions): Promise<RunnerServer> {
  const shutdown = new AbortController();
  // Every call in flight (one Attach per subscribed terminal) listens for shutdown: hundreds is normal.
  setMaxListeners(0, shutdown.signal);
  const interceptors: Interceptor[] = [];
  if (options.metrics) interceptors.push(options.metrics.interceptor());
  if (options.token !== undefined) interceptors.push(createBearerAuth(options.token));
  const routes = (router: ConnectRouter): void => {
    router.service(TerminalService, createTerminalService(options));
    router.service(Health, createHealthService(options.serving));
  };
  const handler = connectNodeAdapter({
    routes,
    interceptors,
    readMaxBytes: MAX_MESSAGE_BYTES,
    writeMaxBytes: MAX_MESSAGE_BYTES,
    // Terminal output flows at tens of MB/s between processes that usually share a machine or a
    // cluster network: compressing it costs more CPU than the bytes it saves.
    acceptCompression: [],
    shutdownSignal: shutdown.signal,
  });
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  const server = http2.createServer({ maxSessionMemory: SESSION_MEMORY_MB, settings: { initialWindowSize: STREAM_WINDOW_BYTES } }, (request, response) => {
    inFlight++;
    response.once("close", () => {
      if (--inFlight === 0) onIdle?.();
    });
    handler(request, response);
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
    session.on("close", () => sessions.delete(session));
  });
  // Clients may keep a socket half-open after GOAWAY; once no call is in flight, shutdown destroys what is left.
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    // Keystrokes and their echoes are tiny writes: Nagle's algorithm would hold them back.
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const { host, port } = await listen(server, options.port, options.host);
  return {
    url: `http://${host}:${port}`,
    port,
    async close() {
      shutdown.abort(new ConnectError("the terminal runner is shutting down", Code.Unavailable));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const idle = inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => (onIdle = resolve));
      for (const session of sessions) session.close();
      await Promise.race([idle, delay(SESSION_CLOSE_GRACE_MS)]);
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
