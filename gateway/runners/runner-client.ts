import type { Http2Session, SecureClientSessionOptions } from "node:http2";
import { connect, isIP } from "node:net";
import { connect as connectTls } from "node:tls";
import type { DescMethodStreaming } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { FollowRequestSchema, TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { runnerTraceInterceptor } from "./runner-tracing.js";
import { FollowMux } from "./follow-mux.js";
import { withDirectStreams } from "./direct-streams.js";
import { encodedFrames, type FrameWriter, type MessageParser } from "../../lib/grpc-frames.js";
import { parseFollowResponse } from "./follow-answers.js";
import { writeStreamFrame } from "./write-stream-frame.js";

/** The runner's API as the gateway calls it: the client generated from proto/terminal/v1. */
export type RunnerClient = Client<typeof TerminalService>;

/** One runner: where it is, its terminal service, the terminals this gateway follows on it, and its standard health service, over one HTTP/2 connection. */
export interface Runner {
  readonly url: string;
  readonly terminals: RunnerClient;
  readonly follows: FollowMux;
  readonly health: Client<typeof Health>;
}

/** HTTP/2 PING interval on the runner connection, so a hung runner is noticed on idle streams too. */
const RUNNER_PING_INTERVAL_MS = 10_000;
/** How long a PING may go unanswered before the connection counts as dead. */
const RUNNER_PING_TIMEOUT_MS = 5_000;

/** Memory the connection to a runner may hold, in MB (matches the runner's own allowance). */
const SESSION_MEMORY_MB = 512;
/**
 * Receive window of the whole connection. HTTP/2 starts every connection at 64 KiB, shared by all
 * its streams: with hundreds of busy terminals on one connection, output would then move one small
 * window per round trip. What the gateway does not take at once stays bounded by each stream's window.
 */
const CONNECTION_WINDOW_BYTES = 64 * 1024 * 1024;
/**
 * Receive window of each stream (one terminal's output), kept at HTTP/2's 64 KiB: a wider one lets
 * a flood run that far ahead of the gateway, which then delivers all of it after a ^C (measured:
 * 1 MiB windows turned 143 KB after ^C into 1.9 MB, and 30 ms echo p99 beside a flood into 425 ms).
 */
const STREAM_WINDOW_BYTES = 64 * 1024 - 1;

/** Opens connections with the wide receive window above (Node offers no option for it). */
class WideWindowSessionManager extends Http2SessionManager {
  private readonly widened = new WeakSet<Http2Session>();

  override async request(...args: Parameters<Http2SessionManager["request"]>): ReturnType<Http2SessionManager["request"]> {
    const stream = await super.request(...args);
    const { session } = stream;
    if (session && !this.widened.has(session)) {
      this.widened.add(session);
      session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
    }
    return stream;
  }
}

/**
 * Clients for the runner at `url`, sending `token` as a bearer token when there is one. An https://
 * runner is reached over TLS (h2 by ALPN), trusting `tls.ca` instead of the system's roots when given
 * and presenting `tls.cert` and `tls.key` to a runner that asks for a client certificate.
 */
export function connectRunner(url: string, token: string | undefined, tls: SecureClientSessionOptions = {}): Runner {
  const interceptors: Interceptor[] = [runnerTraceInterceptor()];
  if (token !== undefined) {
    interceptors.push((next) => (request) => {
      request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    });
  }
  const sessionManager = new WideWindowSessionManager(
    url,
    { pingIntervalMs: RUNNER_PING_INTERVAL_MS, pingTimeoutMs: RUNNER_PING_TIMEOUT_MS, pingIdleConnection: true },
    {
      // Every terminal's Attach and input streams share this one connection: Node's default 10 MB
      // session budget refuses new streams (ENHANCE_YOUR_CALM) once a few hundred terminals are busy.
      maxSessionMemory: SESSION_MEMORY_MB,
      settings: { initialWindowSize: STREAM_WINDOW_BYTES },
      // Keystrokes and their echoes are tiny writes: Nagle's algorithm would hold them back.
      createConnection: (authority: URL) => {
        const host = authority.hostname.replace(/^\[|\]$/g, "");
        if (authority.protocol !== "https:") return connect({ host, port: Number(authority.port || 80), noDelay: true });
        const socket = connectTls({ ...tls, host, port: Number(authority.port || 443), ALPNProtocols: ["h2"], servername: isIP(host) ? undefined : host });
        socket.setNoDelay(true);
        return socket;
      },
    },
  );
  // A keystroke goes out on WriteStream and its echo comes back on Follow: those two streams skip connect's per-message stages.
  const frameWriters = new Map<DescMethodStreaming, FrameWriter<never>>([
    [TerminalService.method.writeStream, writeStreamFrame],
    [TerminalService.method.follow, encodedFrames(FollowRequestSchema)],
  ]);
  // Nearly every Follow answer is output events, read by hand.
  const answerParsers = new Map<DescMethodStreaming, MessageParser<unknown>>([[TerminalService.method.follow, parseFollowResponse]]);
  const transport = withDirectStreams(createGrpcTransport({ baseUrl: url, interceptors, sessionManager }), { baseUrl: url, interceptors, sessionManager, frameWriters, answerParsers });
  const terminals = createClient(TerminalService, transport);
  return { url, terminals, follows: new FollowMux(terminals), health: createClient(Health, transport) };
}
