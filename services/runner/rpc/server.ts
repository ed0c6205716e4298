import { setMaxListeners } from "node:events";
import http2 from "node:http2";
import type { TlsOptions } from "node:tls";
import { setTimeout as delay } from "node:timers/promises";
import { Code, ConnectError, createMethodImplSpec, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { listen } from "../../../lib/listen.js";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { TerminalService, WriteStreamResponseSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { encodedFrames } from "../../../lib/grpc-frames.js";
import { bearerTokenCheck, createBearerAuth } from "./auth.js";
import { createHealthService, type ServingState } from "./health-service.js";
import { metricsInterceptor } from "./metrics-interceptor.js";
import { traceInterceptor } from "./trace-interceptor.js";
import type { Logger } from "../../../lib/logger.js";
import type { RunnerMetrics } from "../metrics.js";
import { createReflectionServices, REFLECTION_SERVICES } from "./reflection-service.js";
import { createTerminalService } from "./terminal-service.js";
import { serveDirectly, type DirectMethod } from "./direct-grpc.js";
import { followResponseFrame } from "./follow-wire.js";
import type { DescriptorLimit } from "../process/descriptor-limit.js";
import type { SpawnGate } from "../spawn/spawn-gate.js";
import type { TerminalRegistry } from "../terminal/terminal-registry.js";
import { createBidiRefusal } from "./bidi-refusal.js";
import { failWritesOnClose } from "./closed-response-writes.js";
import { peerContextValues, refusalLogInterceptor } from "./refusal-log.js";
import { checkRequestBodies } from "./request-body-check.js";
import { createRunnerListener, type ConnectionPolicy, type RequestHandler } from "./runner-listener.js";

/** Largest response message: List of every terminal with its labels; Attach events are at most 64 KiB. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** How long calls still in flight get after GOAWAY before their connections are destroyed. */
const SESSION_CLOSE_GRACE_MS = 2_000;

/** Where and how the runner serves. `token` undefined means no authentication (`--insecure`). */
export interface RunnerServerOptions {
  host: string;
  port: number;
  token: string | undefined;
  /** Serve reflection without the token (health never needs one). */
  openReflection?: boolean;
  /** TLS (h2 by ALPN, and HTTP/1.1) instead of cleartext (h2c, and HTTP/1.1); with `ca`, mutual TLS. */
  tls?: TlsOptions;
  registry: TerminalRegistry;
  spawnGate: SpawnGate;
  /** Refuses spawns and connections when file descriptors run short. */
  descriptors: DescriptorLimit;
  serving: ServingState;
  heartbeatMs: number;
  /** Largest request message accepted; a larger one is RESOURCE_EXHAUSTED on its own call. */
  maxMessageBytes: number;
  /** How many connections, and how long they may take to start and stay idle. */
  connections: ConnectionPolicy;
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

/**
 * Serves TerminalService, grpc.health.v1 and gRPC server reflection, answering gRPC, gRPC-Web and
 * Connect on one port: over cleartext, HTTP/2 with prior knowledge (h2c) and HTTP/1.1, told apart by
 * the HTTP/2 preface; over TLS, h2 or HTTP/1.1 as ALPN settles.
 */
export async function startRunnerServer(options: RunnerServerOptions): Promise<RunnerServer> {
  const shutdown = new AbortController();
  // Every call in flight (one Attach per subscribed terminal) listens for shutdown: hundreds is normal.
  setMaxListeners(0, shutdown.signal);
  // Tracing first, so a call refused by a later interceptor (a wrong token) still has its span.
  const interceptors: Interceptor[] = [traceInterceptor()];
  if (options.metrics) interceptors.push(metricsInterceptor(options.metrics));
  interceptors.push(refusalLogInterceptor(options.log));
  if (options.token !== undefined) interceptors.push(createBearerAuth(options.token, { openReflection: options.openReflection ?? false }));
  const { maxMessageBytes } = options;
  const reflection = createReflectionServices([TerminalService, Health]);
  const refuseOverHttp1 = createBidiRefusal([TerminalService, Health, ...REFLECTION_SERVICES]);
  const terminals = createTerminalService(options);
  // The two streams nearly every message travels on: a terminal's input, and its output to a gateway.
  const directMethods: DirectMethod[] = [
    { spec: createMethodImplSpec(TerminalService.method.writeStream, terminals.writeStream), writeFrame: encodedFrames(WriteStreamResponseSchema) },
    { spec: createMethodImplSpec(TerminalService.method.follow, terminals.follow), writeFrame: followResponseFrame },
  ];
  const routes = (router: ConnectRouter): void => {
    router.service(TerminalService, terminals);
    router.service(Health, createHealthService(options.serving));
    router.service(REFLECTION_SERVICES[0], reflection.v1);
    router.service(REFLECTION_SERVICES[1], reflection.v1alpha);
    checkRequestBodies(router.handlers, maxMessageBytes);
    serveDirectly(router.handlers, directMethods, { interceptors, shutdownSignal: shutdown.signal, maxMessageBytes });
  };
  const handler = connectNodeAdapter({
    routes,
    interceptors,
    readMaxBytes: maxMessageBytes,
    writeMaxBytes: MAX_RESPONSE_BYTES,
    // Terminal output flows at tens of MB/s between processes that usually share a machine or a
    // cluster network: compressing it costs more CPU than the bytes it saves.
    acceptCompression: [],
    shutdownSignal: shutdown.signal,
    contextValues: peerContextValues,
  });
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  const onRequest: RequestHandler = (request, response) => {
    inFlight++;
    response.once("close", () => {
      if (--inFlight === 0) onIdle?.();
    });
    if (refuseOverHttp1(request, response)) return;
    failWritesOnClose(response);
    // A call answered before its request ended (a refusal) asks the client to stop sending, as
    // RFC 9113 §8.1 allows; otherwise the stream would stay open for as long as the client likes.
    // Node's compatibility layer submits the trailers from its own wantTrailers listener; a reset
    // submitted in the same turn would overtake them (nghttp2 sends RST_STREAM first), so it waits one.
    if ("stream" in response) response.stream.once("wantTrailers", () => setImmediate(() => request.complete || response.stream.close(http2.constants.NGHTTP2_NO_ERROR)));
    handler(request, response);
  };
  const { server, sessions, sockets, close: closeListener } = createRunnerListener(onRequest, {
    policy: options.connections,
    tls: options.tls,
    carriesToken: bearerTokenCheck(options.token),
    descriptors: options.descriptors,
    log: options.log,
  });
  const { host, port } = await listen(server, options.port, options.host);
  return {
    url: `${options.tls ? "https" : "http"}://${host}:${port}`,
    port,
    async close() {
      shutdown.abort(new ConnectError("the terminal runner is shutting down", Code.Unavailable));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const idle = inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => (onIdle = resolve));
      for (const session of sessions) session.close();
      await Promise.race([idle, delay(SESSION_CLOSE_GRACE_MS)]);
      for (const socket of sockets) socket.destroy();
      await closed;
      closeListener();
    },
  };
}
