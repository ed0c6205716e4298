import type { TlsOptions } from "node:tls";
import { pathToFileURL } from "node:url";
import type { Logger } from "../lib/logger.js";
import type { AccessPolicy } from "./auth/access.js";
import { HostTerminals } from "./backend/host-terminals.js";
import { runTurnCommand, type TurnCommand, type TurnCommandResult } from "./backend/turn-commands.js";
import { GATEWAY_HANDLERS } from "./handlers/index.js";
import type { GatewayServices } from "./handlers/session.js";
import type { GatewayMetrics } from "./metrics.js";
import { watchEveryRunner } from "./runners/watch-every-runner.js";
import type { RunnerPool } from "./runners/runner-pool.js";
import { ClientRegistry } from "./state/client-registry.js";
import { serverSeqBaseAt } from "./state/server-seq-base.js";
import { StateStore } from "./state/store.js";
import { Dispatcher } from "./terminals/dispatch.js";
import { OpenTerminals } from "./terminals/open-terminals.js";
import { DEFAULT_TERMINAL_LIMITS, TerminalQuota, type TerminalLimits } from "./terminals/terminal-quota.js";
import { Connection } from "./wire/connection.js";
import { consoleRoutes } from "./wire/console-files.js";
import { armInitializeDeadline } from "./wire/initialize-deadline.js";
import { ownerOfId } from "./auth/reach.js";
import { startListener } from "./wire/listener.js";
import { RateLimitedLog } from "../lib/rate-limited-log.js";
import { DEFAULT_SOCKET_LIMITS, type SocketLimits } from "./wire/socket-limits.js";

/** How long /readyz waits for a runner's health check. */
const READY_CHECK_TIMEOUT_MS = 1_000;

/** Everything a gateway is built from: where it listens, who may sign in, its runners, limits and defaults. */
export interface GatewayDeps {
  host: string;
  port: number;
  /** The connection token clients present at the WebSocket upgrade. */
  token: string;
  maxFrameBytes: number;
  /** Deadlines, pings and connection counts of sockets (default DEFAULT_SOCKET_LIMITS). */
  socketLimits?: SocketLimits;
  /** Host names and origins allowed besides the gateway's own (`--allowed-hosts`, `--allowed-origins`; default none). */
  allowedHosts?: readonly string[];
  allowedOrigins?: readonly string[];
  /** How many terminals a connection and a person may have open (default DEFAULT_TERMINAL_LIMITS). */
  terminalLimits?: TerminalLimits;
  /** The Unix account terminals the host opens itself (backends, `!` commands) run as; undefined: the services' own. */
  hostTerminalUser?: string;
  /** Serve https and wss with these TLS options; undefined: http and ws. */
  tls?: TlsOptions;
  access: AccessPolicy;
  /** The runners terminals are placed on; undefined for a host that serves no terminals. */
  runners: RunnerPool | undefined;
  log: Logger;
  scrollbackChars: number;
  defaultDirectory: string;
  /** The host's own shell, for terminals a backend opens with a shell line. */
  shell: string;
  /** The version `initialize` reports in `serverInfo`. */
  version: string;
  /** True to serve the browser console at `/`. */
  console: boolean;
  metrics?: GatewayMetrics;
  /** Called with a terminal's last working directory when its process exits. */
  onTerminalExit?: (cwd: string) => void;
  /** False to leave watching the runners' records to the caller (default: read before serving, and watched from then on, those of runners found later too). */
  watchRunners?: boolean;
  /** How long a terminal nobody reads here is still followed (default FOLLOW_GRACE_MS). */
  followGraceMs?: number;
  /** The first serverSeq (default: derived from the clock, above every one an earlier gateway issued). */
  serverSeqBase?: number;
}

/** A serving gateway and its parts. */
export interface Gateway {
  /** The WebSocket URL, with the connection token. */
  url: string;
  port: number;
  store: StateStore;
  terminals: OpenTerminals;
  /** The port through which an in-process backend opens terminals of the host's own; undefined without runners. */
  backend: HostTerminals | undefined;
  /** Runs a turn's `!` command in a terminal of its own. */
  runTurnCommand(command: TurnCommand): Promise<TurnCommandResult>;
  /** Stops watching runners and following terminals (they keep running in the runner) and closes every socket. */
  close(): Promise<void>;
}

/** Builds the gateway from its parts and starts serving: the wiring `main.ts` and the tests share. */
export async function startGateway(deps: GatewayDeps): Promise<Gateway> {
  const { log, runners, metrics } = deps;
  const store = new StateStore(deps.scrollbackChars, deps.serverSeqBase ?? serverSeqBaseAt(Date.now()));
  const terminals = new OpenTerminals({ store, runners, log, defaultDirectory: deps.defaultDirectory, onTerminalExit: deps.onTerminalExit, followGraceMs: deps.followGraceMs });
  const dispatcher = new Dispatcher({ store, terminals, log, metrics });
  const backend = runners ? new HostTerminals({ store, terminals, dispatcher }, deps.shell, deps.hostTerminalUser) : undefined;
  metrics?.countTerminalsWith(() => store.terminalCount);
  metrics?.countFollowedWith(() => terminals.followedCount);
  const services: GatewayServices = {
    store,
    terminals,
    dispatcher,
    clients: new ClientRegistry(),
    access: deps.access,
    limits: { maxFrameBytes: deps.maxFrameBytes },
    quota: new TerminalQuota(
      deps.terminalLimits ?? DEFAULT_TERMINAL_LIMITS,
      (uri) => store.hasChannel(uri),
      (user) => store.terminalCountOf(ownerOfId(user)),
    ),
    log,
    refusals: new RateLimitedLog(log),
    metrics,
    info: { serverInfo: { name: "ahp-terminal-gateway", version: deps.version }, defaultDirectory: pathToFileURL(deps.defaultDirectory).href },
  };
  const stopWatching = new AbortController();
  if (runners && deps.watchRunners !== false) {
    await watchEveryRunner(terminals, runners, log, stopWatching.signal);
    runners.keepDiscovering(stopWatching.signal);
  }
  const connections = new Set<Connection>();
  // A removed, expired or demoted user's live connections lose what they may no longer read.
  const stopWatchingAccess = deps.access.watch?.(() => {
    for (const connection of connections) connection.reviewAccess();
  });
  const socketLimits = deps.socketLimits ?? DEFAULT_SOCKET_LIMITS;
  const listener = await startListener({
    host: deps.host,
    port: deps.port,
    token: deps.token,
    maxFrameBytes: deps.maxFrameBytes,
    limits: socketLimits,
    allowedHosts: deps.allowedHosts ?? [],
    allowedOrigins: deps.allowedOrigins ?? [],
    log,
    tls: deps.tls,
    routes: {
      ...(deps.console ? consoleRoutes() : {}),
      "/healthz": async () => ({ status: 200, body: "ok\n" }),
      "/readyz": async () => ((await terminals.ready(READY_CHECK_TIMEOUT_MS)) ? { status: 200, body: "ready\n" } : { status: 503, body: "no runner answers\n" }),
    },
    accept(socket) {
      const connection = new Connection(socket, services, GATEWAY_HANDLERS);
      connections.add(connection);
      const cancelDeadline = armInitializeDeadline(connection, socket, socketLimits.initializeTimeoutMs, log);
      return {
        onFrame: (text) => connection.receive(text),
        onClose: () => {
          cancelDeadline();
          connections.delete(connection);
          connection.closedByPeer();
        },
      };
    },
  });
  return {
    url: listener.url,
    port: listener.port,
    store,
    terminals,
    backend,
    runTurnCommand: (command) => runTurnCommand(backend, command, deps.defaultDirectory),
    async close() {
      stopWatching.abort();
      stopWatchingAccess?.();
      terminals.close();
      await listener.close();
    },
  };
}
