import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TerminalService } from "../gen/terminal/v1/terminal_pb.js";

/** The runner's API as the gateway calls it: the client generated from proto/terminal/v1. */
export type RunnerClient = Client<typeof TerminalService>;

/** HTTP/2 PING interval on the runner connection, so a hung runner is noticed on idle streams too. */
const RUNNER_PING_INTERVAL_MS = 10_000;
/** How long a PING may go unanswered before the connection counts as dead. */
const RUNNER_PING_TIMEOUT_MS = 5_000;

/** A gRPC client for the runner at `baseUrl`, sending `token` as a bearer token when there is one. */
export function createRunnerClient(baseUrl: string, token: string | undefined): RunnerClient {
  const interceptors: Interceptor[] = [];
  if (token !== undefined) {
    interceptors.push((next) => (request) => {
      request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    });
  }
  return createClient(
    TerminalService,
    createGrpcTransport({
      baseUrl,
      interceptors,
      pingIntervalMs: RUNNER_PING_INTERVAL_MS,
      pingTimeoutMs: RUNNER_PING_TIMEOUT_MS,
      pingIdleConnection: true,
    }),
  );
}
