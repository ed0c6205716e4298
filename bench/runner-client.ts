import { connect } from "node:net";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { TerminalService } from "../gen/terminal/v1/terminal_pb.js";

/**
 * Each stream's receive window, as the gateway keeps it (gateway/runners/runner-client.ts): 64 KiB,
 * so runner-only figures see the same pacing the gateway gives the runner.
 */
const STREAM_WINDOW_BYTES = 64 * 1024 - 1;

/**
 * A gRPC client for a runner, from the generated code, reaching it as the gateway does (one HTTP/2
 * connection, Nagle off, the same per-stream window) but over the wire only: benchmarks import no
 * gateway or runner code.
 */
export function benchRunnerClient(url: string, token: string): Client<typeof TerminalService> {
  const sessionManager = new Http2SessionManager(url, {}, {
    settings: { initialWindowSize: STREAM_WINDOW_BYTES },
    // Keystrokes and echoes are tiny writes that Nagle's algorithm would hold back.
    createConnection: (authority: URL) => connect({ host: authority.hostname, port: Number(authority.port || 80), noDelay: true }),
  });
  return createClient(
    TerminalService,
    createGrpcTransport({
      baseUrl: url,
      sessionManager,
      interceptors: [
        (next) => (request) => {
          request.header.set("authorization", `Bearer ${token}`);
          return next(request);
        },
      ],
    }),
  );
}
