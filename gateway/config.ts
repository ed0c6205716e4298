import { randomBytes } from "node:crypto";
import type { ParseArgsConfig } from "node:util";
import { isAbsolute } from "node:path";
import { ConfigError, integerFlag, parseFlags } from "../lib/cli.js";
import { LOG_LEVELS } from "../lib/logger.js";
import { resolveSecret } from "../lib/secret-file.js";
import { UNIX_USER_PATTERN } from "./auth/users-file.js";
import { DEFAULT_TERMINAL_LIMITS, type TerminalLimits } from "./terminals/terminal-quota.js";
import { normalizedHostPattern, normalizedOrigin } from "./wire/host-guard.js";
import { DEFAULT_SOCKET_LIMITS, type SocketLimits } from "./wire/socket-limits.js";
import type { ClientTlsFiles } from "../lib/tls-client-options.js";
import type { ServerTlsFiles } from "../lib/tls-server-options.js";
import { tracingSettingsFromEnv, type TracingSettings } from "../lib/tracing-settings.js";

/** Everything the gateway process is configured with. */
export interface GatewayConfig {
  host: string;
  port: number;
  token: string;
  /** Every runner's base URL (a name resolving to several addresses stands for several runners). */
  runnerUrls: string[];
  runnerToken: string | undefined;
  /** Said at start: token files that others than their owner can read. */
  tokenWarnings: string[];
  scrollbackChars: number;
  defaultDirectory: string;
  maxFrameBytes: number;
  /** Deadlines, pings and connection counts of sockets. */
  socketLimits: SocketLimits;
  /** Host names (and `.domains`, `*`) allowed besides loopback names, addresses and the bound host. */
  allowedHosts: string[];
  /** Origins of pages allowed besides the gateway's own (or `*`). */
  allowedOrigins: string[];
  /** How many terminals a connection and a person may have open. */
  terminalLimits: TerminalLimits;
  /** The Unix account the host's own terminals run as; undefined: the services' own. */
  hostTerminalUser: string | undefined;
  /** Where /metrics is served; undefined: nowhere. */
  metricsPort: number | undefined;
  /** True for a host that serves no terminals (no runner at all). */
  noRunner: boolean;
  /** True to refuse to start unless a runner answers an authenticated call. */
  requireRunner: boolean;
  /** True to serve the browser console at `/`. */
  console: boolean;
  /** Serve https and wss with this certificate and key (and require client certificates signed by `clientCa`); undefined: plain http and ws. */
  tls: ServerTlsFiles | undefined;
  /** How to reach https:// runners: a CA to trust instead of the system's, a certificate and key to present. */
  runnerTls: ClientTlsFiles;
  /** The users file; undefined means the connection token's holder is a member. */
  usersFile: string | undefined;
  /** Export traces over OTLP (the OTEL_* variables); undefined: no tracing. */
  tracing: TracingSettings | undefined;
  logLevel: string;
  help: boolean;
}

/** The gateway's service name in traces when OTEL_SERVICE_NAME does not give one. */
export const GATEWAY_SERVICE_NAME = "ahp-gateway";

/** Default port; `--port 0` picks a free one. */
export const DEFAULT_GATEWAY_PORT = 7071;
/**
 * Default largest WebSocket frame: a pasted megabyte (1 Mi characters, at most 3 UTF-8 bytes each)
 * with room for its JSON escaping. Clients framing their own messages (AHP 1.1) send far less per frame.
 */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** How long --require-runner waits for a runner's answer: a runner started beside the gateway listens within a second or two. */
export const REQUIRE_RUNNER_WAIT_MS = 5_000;
/** Where the runner listens by default (its own default port on loopback). */
const DEFAULT_RUNNER_URL = "http://127.0.0.1:7070";

/** The flags, their defaults and what they do, as `--help` prints them. */
export const GATEWAY_USAGE = `Usage: npm run gateway -- [flags]     (or: npm run gateway -- users ..., see users --help)
  --host HOST               address to bind (default 127.0.0.1)
  --port PORT               port to bind, 0 for any free one (default ${DEFAULT_GATEWAY_PORT})
  --token TOKEN             connection token clients must present (default: --token-file, else $GATEWAY_TOKEN_FILE,
                            else $GATEWAY_TOKEN, else generated)
  --token-file FILE         read the connection token from FILE (keep it mode 600)
  --runner URL              a terminal runner's base URL; repeat it for several runners (default ${DEFAULT_RUNNER_URL})
  --runner-token TOKEN      bearer token for the runner (default: --runner-token-file, else $RUNNER_TOKEN_FILE,
                            else $RUNNER_TOKEN; none means an --insecure runner)
  --runner-token-file FILE  read the runner's bearer token from FILE (keep it mode 600)
  --no-runner               serve no terminals at all (createTerminal is refused, no "!" prefix is advertised)
  --require-runner          exit (code 6) unless a runner answers within ${REQUIRE_RUNNER_WAIT_MS / 1000} s of start, and accepts the runner token
                            (default: start anyway and adopt runners as they come)
  --no-console              do not serve the browser console at / (default: served)
  --scrollback-chars N      characters of content kept per terminal (default 200000)
  --default-directory DIR   where terminals start when the client names no cwd (default: $HOME, else the current directory)
  --max-frame-bytes N       largest WebSocket frame accepted; bigger ones close the socket with 1009 (default ${DEFAULT_MAX_FRAME_BYTES})
  --allowed-hosts LIST      host names clients may use besides localhost, IP addresses and --host, comma-separated;
                            .example.com allows a domain and its subdomains, * any name (no DNS-rebinding defence)
  --allowed-origins LIST    origins of web pages that may connect besides the gateway's own, comma-separated
                            (https://x.example), * for any page (then only the token keeps other sites out)
  --headers-timeout-ms N    a request's headers (TLS handshake included) must arrive within N ms (default ${DEFAULT_SOCKET_LIMITS.headersTimeoutMs})
  --initialize-timeout-ms N a WebSocket must initialize (or reconnect) within N ms, else it is closed with 1008 (default ${DEFAULT_SOCKET_LIMITS.initializeTimeoutMs})
  --ping-interval-ms N      ping every WebSocket this often (default ${DEFAULT_SOCKET_LIMITS.pingIntervalMs})
  --pong-timeout-ms N       drop a WebSocket whose peer neither sends nor reads for N ms after a ping (default ${DEFAULT_SOCKET_LIMITS.pongTimeoutMs})
  --max-connections N       connections open at once, WebSocket and HTTP; more get 503 (default ${DEFAULT_SOCKET_LIMITS.maxConnections},
                            lowered to what the open-file limit allows)
  --max-connections-per-address N   connections open at once from one remote address (default ${DEFAULT_SOCKET_LIMITS.maxConnectionsPerAddress})
  --max-terminals-per-connection N   terminals one connection may have open (default ${DEFAULT_TERMINAL_LIMITS.perConnection})
  --max-terminals-per-user N         terminals one person may have open over all their connections (default ${DEFAULT_TERMINAL_LIMITS.perUser})
  --host-terminal-user ACCOUNT       the Unix account the host's own terminals ("!" commands, backends) run as
                            (the runner needs --allow-run-as; default: the services' own account)
  --tls-cert FILE           serve https and wss with this certificate chain (PEM; needs --tls-key)
  --tls-key FILE            the certificate's private key (PEM)
  --tls-client-ca FILE      also require every client to present a certificate signed by this CA (mutual TLS)
  --runner-ca FILE          trust this CA (instead of the system's) for https:// runners
  --runner-cert FILE        present this client certificate to https:// runners (mutual TLS; needs --runner-key)
  --runner-key FILE         the client certificate's private key
  --metrics-port PORT       serve Prometheus metrics at http://HOST:PORT/metrics (default: not served)
  --users FILE              users, roles and hashed secrets; clients must then authenticate (default: $GATEWAY_USERS)
  --log-level LEVEL         ${LOG_LEVELS.join(", ")} (default info)
  --version                 print the version and exit
  --help                    print this and exit`;

/** Every flag the gateway takes, with its type and default (what `npm start` routes to the gateway is read from here too). */
export const GATEWAY_FLAGS = {
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: String(DEFAULT_GATEWAY_PORT) },
  token: { type: "string" },
  "token-file": { type: "string" },
  runner: { type: "string", multiple: true, default: [DEFAULT_RUNNER_URL] },
  "runner-token": { type: "string" },
  "runner-token-file": { type: "string" },
  "no-runner": { type: "boolean", default: false },
  "require-runner": { type: "boolean", default: false },
  "no-console": { type: "boolean", default: false },
  "scrollback-chars": { type: "string", default: "200000" },
  "default-directory": { type: "string" },
  "max-frame-bytes": { type: "string", default: String(DEFAULT_MAX_FRAME_BYTES) },
  "allowed-hosts": { type: "string", multiple: true, default: [] },
  "allowed-origins": { type: "string", multiple: true, default: [] },
  "headers-timeout-ms": { type: "string", default: String(DEFAULT_SOCKET_LIMITS.headersTimeoutMs) },
  "initialize-timeout-ms": { type: "string", default: String(DEFAULT_SOCKET_LIMITS.initializeTimeoutMs) },
  "ping-interval-ms": { type: "string", default: String(DEFAULT_SOCKET_LIMITS.pingIntervalMs) },
  "pong-timeout-ms": { type: "string", default: String(DEFAULT_SOCKET_LIMITS.pongTimeoutMs) },
  "max-connections": { type: "string", default: String(DEFAULT_SOCKET_LIMITS.maxConnections) },
  "max-connections-per-address": { type: "string", default: String(DEFAULT_SOCKET_LIMITS.maxConnectionsPerAddress) },
  "max-terminals-per-connection": { type: "string", default: String(DEFAULT_TERMINAL_LIMITS.perConnection) },
  "max-terminals-per-user": { type: "string", default: String(DEFAULT_TERMINAL_LIMITS.perUser) },
  "host-terminal-user": { type: "string" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  "tls-client-ca": { type: "string" },
  "runner-ca": { type: "string" },
  "runner-cert": { type: "string" },
  "runner-key": { type: "string" },
  users: { type: "string" },
  "metrics-port": { type: "string" },
  "log-level": { type: "string", default: "info" },
  help: { type: "boolean", default: false },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

/** The shortest a socket deadline or ping interval may be: under it, one busy turn of the event loop would cut clients that did nothing wrong. */
const MIN_TIMEOUT_MS = 100;

/** A comma-separated list flag (it may be repeated), each entry normalized; ConfigError naming the entry that is not `what`. */
function listFlag(name: string, given: string[], normalize: (entry: string) => string | undefined, what: string): string[] {
  const entries = given.flatMap((value) => value.split(",")).filter((entry) => entry.trim() !== "");
  return entries.map((entry) => {
    const normalized = normalize(entry);
    if (normalized === undefined) throw new ConfigError(`--${name}: "${entry}" is not ${what}`);
    return normalized;
  });
}

/** Reads flags and environment into a configuration; throws ConfigError with a readable message. */
export function parseGatewayConfig(argv: string[], env: NodeJS.ProcessEnv, cwd: string): GatewayConfig {
  const values = parseFlags(argv, GATEWAY_FLAGS);
  if (!(LOG_LEVELS as readonly string[]).includes(values["log-level"])) throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
  const given = resolveSecret(
    { flag: { name: "token", value: values.token }, fileFlag: { name: "token-file", value: values["token-file"] }, fileVariable: "GATEWAY_TOKEN_FILE", variable: "GATEWAY_TOKEN" },
    env,
  );
  const token = given?.secret ?? randomBytes(24).toString("base64url");
  if (token.trim() === "") throw new ConfigError("the connection token must not be empty");
  for (const url of values.runner) if (!/^https?:\/\/[^/]+/.test(url)) throw new ConfigError(`--runner must be an http(s) URL, got "${url}"`);
  if (values["require-runner"] && values["no-runner"]) throw new ConfigError("--require-runner and --no-runner contradict each other; give one");
  const hostTerminalUser = values["host-terminal-user"];
  if (hostTerminalUser !== undefined && !UNIX_USER_PATTERN.test(hostTerminalUser)) throw new ConfigError(`--host-terminal-user must be a Unix account name, got "${hostTerminalUser}"`);
  const defaultDirectory = values["default-directory"] ?? env.HOME ?? cwd;
  if (!isAbsolute(defaultDirectory)) throw new ConfigError(`--default-directory must be an absolute path, got "${defaultDirectory}"`);
  const givenRunnerToken = resolveSecret(
    { flag: { name: "runner-token", value: values["runner-token"] }, fileFlag: { name: "runner-token-file", value: values["runner-token-file"] }, fileVariable: "RUNNER_TOKEN_FILE", variable: "RUNNER_TOKEN" },
    env,
  );
  const runnerToken = givenRunnerToken?.secret;
  if ((values["tls-cert"] === undefined) !== (values["tls-key"] === undefined)) throw new ConfigError("--tls-cert and --tls-key go together");
  if (values["tls-client-ca"] !== undefined && values["tls-cert"] === undefined) throw new ConfigError("--tls-client-ca needs --tls-cert and --tls-key");
  if ((values["runner-cert"] === undefined) !== (values["runner-key"] === undefined)) throw new ConfigError("--runner-cert and --runner-key go together");
  const runnerTls: ClientTlsFiles = {};
  if (values["runner-ca"] !== undefined) runnerTls.ca = values["runner-ca"];
  if (values["runner-cert"] !== undefined) runnerTls.cert = values["runner-cert"];
  if (values["runner-key"] !== undefined) runnerTls.key = values["runner-key"];
  if (Object.keys(runnerTls).length > 0) {
    for (const url of values.runner) if (!url.startsWith("https://")) throw new ConfigError(`--runner-ca, --runner-cert and --runner-key are for https:// runners, got "${url}"`);
  }
  return {
    host: values.host,
    port: integerFlag("port", values.port, 0, 65535),
    token,
    runnerUrls: [...new Set(values.runner.map((url) => url.replace(/\/+$/, "")))],
    runnerToken: runnerToken === "" ? undefined : runnerToken,
    tokenWarnings: [given?.warning, givenRunnerToken?.warning].filter((warning): warning is string => warning !== undefined),
    scrollbackChars: integerFlag("scrollback-chars", values["scrollback-chars"], 1000),
    defaultDirectory,
    maxFrameBytes: integerFlag("max-frame-bytes", values["max-frame-bytes"], 1024),
    socketLimits: {
      headersTimeoutMs: integerFlag("headers-timeout-ms", values["headers-timeout-ms"], MIN_TIMEOUT_MS),
      initializeTimeoutMs: integerFlag("initialize-timeout-ms", values["initialize-timeout-ms"], MIN_TIMEOUT_MS),
      pingIntervalMs: integerFlag("ping-interval-ms", values["ping-interval-ms"], MIN_TIMEOUT_MS),
      pongTimeoutMs: integerFlag("pong-timeout-ms", values["pong-timeout-ms"], MIN_TIMEOUT_MS),
      maxConnections: integerFlag("max-connections", values["max-connections"], 1),
      maxConnectionsPerAddress: integerFlag("max-connections-per-address", values["max-connections-per-address"], 1),
    },
    allowedHosts: listFlag("allowed-hosts", values["allowed-hosts"], normalizedHostPattern, "a host name, an address, .domain or *, without a port or scheme"),
    allowedOrigins: listFlag("allowed-origins", values["allowed-origins"], normalizedOrigin, "an origin (scheme://host[:port], no path) or *"),
    terminalLimits: {
      perConnection: integerFlag("max-terminals-per-connection", values["max-terminals-per-connection"], 1),
      perUser: integerFlag("max-terminals-per-user", values["max-terminals-per-user"], 1),
    },
    hostTerminalUser,
    metricsPort: values["metrics-port"] === undefined ? undefined : integerFlag("metrics-port", values["metrics-port"], 0, 65535),
    noRunner: values["no-runner"],
    requireRunner: values["require-runner"],
    console: !values["no-console"],
    usersFile: values.users ?? (env.GATEWAY_USERS || undefined),
    tls:
      values["tls-cert"] === undefined || values["tls-key"] === undefined
        ? undefined
        : { cert: values["tls-cert"], key: values["tls-key"], ...(values["tls-client-ca"] === undefined ? {} : { clientCa: values["tls-client-ca"] }) },
    runnerTls,
    tracing: tracingSettingsFromEnv(env, GATEWAY_SERVICE_NAME),
    logLevel: values["log-level"],
    help: values.help,
  };
}

