import { connect } from "node:net";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { TerminalService } from "../gen/terminal/v1/terminal_pb.js";

/** The runner's API as the gateway calls it: the client generated from proto/terminal/v1. */
export type RunnerClient = Client<typeof TerminalService>;

/** One runner: where it is, its terminal service and its standard health service, over one HTTP/2 connection. */
export interface Runner {
  readonly url: string;
  readonly terminals: RunnerClient;
  readonly health: Client<typeof Health>;
}

/** HTTP/2 PING interval on the runner connection, so a hung runner is noticed on idle streams too. */
const RUNNER_PING_INTERVAL_MS = 10_000;
/** How long a PING may go unanswered before the connection counts as dead. */
const RUNNER_PING_TIMEOUT_MS = 5_000;

/** Clients for the runner at `url`, sending `token` as a bearer token when there is one. */
export function connectRunner(url: string, token: string | undefined): Runner {
  const interceptors: Interceptor[] = [];
  if (token !== undefined) {
    interceptors.push((next) => (request) => {
      request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    });
  }
  const transport = createGrpcTransport({
    baseUrl: url,
    interceptors,
    // Keystrokes and their echoes are tiny writes: Nagle's algorithm would hold them back.
    nodeOptions: { createConnection: (authority: URL) => connect({ host: authority.hostname.replace(/^\[|\]$/g, ""), port: Number(authority.port || 80), noDelay: true }) },
    pingIntervalMs: RUNNER_PING_INTERVAL_MS,
    pingTimeoutMs: RUNNER_PING_TIMEOUT_MS,
    pingIdleConnection: true,
  });
  return { url, terminals: createClient(TerminalService, transport), health: createClient(Health, transport) };
}
