import { randomBytes } from "node:crypto";
import type { ParseArgsConfig } from "node:util";
import { ConfigError, integerFlag, parseFlags } from "../../lib/cli.js";
import { LOG_LEVELS } from "../../lib/logger.js";
import { resolveSecret } from "../../lib/secret-file.js";
import type { ServerTlsFiles } from "../../lib/tls-server-options.js";
import { tracingSettingsFromEnv, type TracingSettings } from "../../lib/tracing-settings.js";

/** Everything the runner process is configured with. */
export interface RunnerConfig {
  host: string;
  port: number;
  /** The bearer token every RPC must carry; undefined with `--insecure`. */
  token: string | undefined;
  /** True when no token was given and one was made up (the runner then prints it). */
  tokenGenerated: boolean;
  /** Said at start when the token file can be read by others than its owner. */
  tokenWarning: string | undefined;
  /** Honour SpawnRequest.run_as: start processes as other Unix accounts (never uid 0 without allowRunAsRoot). */
  allowRunAs: boolean;
  allowRunAsRoot: boolean;
  retainBytes: number;
  retainTotalBytes: number;
  heartbeatMs: number;
  maxTerminals: number;
  /** Largest request message accepted; a larger one is RESOURCE_EXHAUSTED on its own call. */
  maxMessageBytes: number;
  /** Spawns in progress at once, and spawns that may wait for one (more are RESOURCE_EXHAUSTED). */
  maxConcurrentSpawns: number;
  maxQueuedSpawns: number;
  /** Connections held at once, in total and from one remote address (more are closed at once). */
  maxConnections: number;
  maxConnectionsPerAddress: number;
  /** Each step of a connection's start (first bytes or TLS, then HTTP/2 SETTINGS or HTTP/1.1 headers). */
  handshakeTimeoutMs: number;
  /** An HTTP/2 connection with no call open for this long is closed (GOAWAY); 0: never. */
  idleTimeoutMs: number;
  closeGraceMs: number;
  /** How much nicer than the runner terminals' processes run (0–19). */
  processNice: number;
  /** Where /metrics is served; undefined: nowhere. */
  metricsPort: number | undefined;
  /** Reflection without the token. */
  openReflection: boolean;
  /** Serve TLS from these files; undefined: cleartext (h2c and HTTP/1.1). */
  tls: ServerTlsFiles | undefined;
  /** Export traces over OTLP (the OTEL_* variables); undefined: no tracing. */
  tracing: TracingSettings | undefined;
  logLevel: string;
  help: boolean;
}

/** The runner's service name in traces when OTEL_SERVICE_NAME does not give one. */
export const RUNNER_SERVICE_NAME = "terminal-runner";

/** Default of --max-message-bytes: a paste into Write as large as the gateway's largest WebSocket frame (16 MiB) still fits. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Smallest --max-message-bytes: a Spawn with its environment and labels needs a few KiB. */
const MIN_MESSAGE_BYTES = 64 * 1024;
/** Largest --max-message-bytes: what a 32-bit length prefix can declare. */
const MAX_ENVELOPE_LENGTH = 2 ** 32 - 1;

/** Default of --max-concurrent-spawns: up to this many synchronous spawns run in one turn of the event loop (a stall of tens of ms); 4 started a burst 20% faster than 1 at the same stall. */
export const DEFAULT_MAX_CONCURRENT_SPAWNS = 4;
/** Default of --max-queued-spawns: about a second of spawning waits; a larger burst is refused rather than left to time out. */
export const DEFAULT_MAX_QUEUED_SPAWNS = 128;

/** Default of --max-connections: a gateway needs one, scripts and probes a few; each holds a descriptor terminals also need. */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/** Default of --max-connections-per-address: every client on one host (or behind one proxy) shares it. */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 128;
/** Default of --handshake-timeout-ms: every client speaks at once; a slow network takes a few round trips, not seconds. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
/** Default of --idle-timeout-ms: longer than any pause between a gateway's calls that matters, short enough that forgotten connections go. */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

/**
 * How much nicer than the runner the processes of terminals run by default: not at all, as a login
 * shell's would. Lowered (`--process-nice`), a busy terminal yields a contended CPU to the runner and
 * the gateway: on two cores, echo beside a `yes` flood came back about a quarter sooner and ^C
 * stopped it sooner, with fewer bytes after it. But a lowered shell no longer preempts what runs when
 * a key wakes it, and echo at an idle prompt had a longer tail in most alternated runs, so it is the
 * operator's choice.
 */
export const DEFAULT_PROCESS_NICE = 0;
/** The kernel's lowest priority. */
export const MAX_NICE = 19;

/** Default port; `--port 0` picks a free one. */
export const DEFAULT_RUNNER_PORT = 7070;

/** The flags, their defaults and what they do, as `--help` prints them. */
export const RUNNER_USAGE = `Usage: npm run runner -- [flags]
  --host HOST               address to bind (default 127.0.0.1: the runner runs arbitrary code)
  --port PORT               port to bind, 0 for any free one (default ${DEFAULT_RUNNER_PORT})
  --token TOKEN             bearer token every RPC must carry (default: --token-file, else $RUNNER_TOKEN_FILE,
                            else $RUNNER_TOKEN, else one is generated and printed)
  --token-file FILE         read the bearer token from FILE (keep it mode 600: whoever reads it can run commands)
  --allow-run-as            honour Spawn's run_as: start a terminal's process as that Unix account (needs root)
  --allow-run-as-root       with --allow-run-as, also accept accounts with uid 0
  --insecure                serve without authentication (says so on stderr)
  --retain-bytes N          output bytes retained per terminal (default 1048576)
  --retain-total-bytes N    output bytes retained over all terminals (default 268435456)
  --heartbeat-ms N          heartbeat interval on idle Attach streams (default 15000)
  --max-terminals N         terminals held at once, running or exited (default 1024)
  --max-message-bytes N     largest request message; a larger one fails alone with RESOURCE_EXHAUSTED
                            (default 16777216: a paste as large as the gateway's largest frame)
  --max-concurrent-spawns N spawns in progress at once; each holds the event loop while it forks (default ${DEFAULT_MAX_CONCURRENT_SPAWNS})
  --max-queued-spawns N     spawns that may wait for one in progress; more are RESOURCE_EXHAUSTED (default ${DEFAULT_MAX_QUEUED_SPAWNS})
  --max-connections N       connections held at once; more are closed as they arrive (default ${DEFAULT_MAX_CONNECTIONS})
  --max-connections-per-address N
                            connections held at once from one remote address (default ${DEFAULT_MAX_CONNECTIONS_PER_ADDRESS})
  --handshake-timeout-ms N  time for each step of a connection's start: TLS, the HTTP/2 preface and SETTINGS,
                            an HTTP/1.1 request's headers (default ${DEFAULT_HANDSHAKE_TIMEOUT_MS})
  --idle-timeout-ms N       an HTTP/2 connection without calls for this long gets GOAWAY, 0 for never
                            (default ${DEFAULT_IDLE_TIMEOUT_MS})
  --close-grace-ms N        SIGTERM-to-SIGKILL grace when closing a terminal (default 2000)
  --process-nice N          run terminals' processes N nicer than the runner, 0 to 19, so busy ones yield the CPU
                            to every terminal's input and output (default ${DEFAULT_PROCESS_NICE}: as the runner)
  --metrics-port PORT       serve Prometheus metrics at http://HOST:PORT/metrics (default: not served)
  --open-reflection         serve gRPC server reflection without the token (default: it needs the token)
  --tls-cert FILE           serve TLS (h2 and HTTP/1.1) with this PEM certificate chain (needs --tls-key)
  --tls-key FILE            the PEM private key of --tls-cert
  --tls-client-ca FILE      require client certificates signed by this PEM CA (mutual TLS; needs --tls-cert)
  --log-level LEVEL         ${LOG_LEVELS.join(", ")} (default info)
  --help                    print this and exit
  --version                 print the version and exit`;

/** Every flag the runner takes, with its type and default (what `npm start` routes to the runner is read from here too). */
export const RUNNER_FLAGS = {
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: String(DEFAULT_RUNNER_PORT) },
  token: { type: "string" },
  "token-file": { type: "string" },
  "allow-run-as": { type: "boolean", default: false },
  "allow-run-as-root": { type: "boolean", default: false },
  insecure: { type: "boolean", default: false },
  "retain-bytes": { type: "string", default: String(1024 * 1024) },
  "retain-total-bytes": { type: "string", default: String(256 * 1024 * 1024) },
  "heartbeat-ms": { type: "string", default: "15000" },
  "max-terminals": { type: "string", default: "1024" },
  "max-message-bytes": { type: "string", default: String(DEFAULT_MAX_MESSAGE_BYTES) },
  "max-concurrent-spawns": { type: "string", default: String(DEFAULT_MAX_CONCURRENT_SPAWNS) },
  "max-queued-spawns": { type: "string", default: String(DEFAULT_MAX_QUEUED_SPAWNS) },
  "max-connections": { type: "string", default: String(DEFAULT_MAX_CONNECTIONS) },
  "max-connections-per-address": { type: "string", default: String(DEFAULT_MAX_CONNECTIONS_PER_ADDRESS) },
  "handshake-timeout-ms": { type: "string", default: String(DEFAULT_HANDSHAKE_TIMEOUT_MS) },
  "idle-timeout-ms": { type: "string", default: String(DEFAULT_IDLE_TIMEOUT_MS) },
  "close-grace-ms": { type: "string", default: "2000" },
  "process-nice": { type: "string", default: String(DEFAULT_PROCESS_NICE) },
  "metrics-port": { type: "string" },
  "open-reflection": { type: "boolean", default: false },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  "tls-client-ca": { type: "string" },
  "log-level": { type: "string", default: "info" },
  help: { type: "boolean", default: false },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

/** Reads flags (and RUNNER_TOKEN) into a configuration; throws ConfigError with a readable message. */
export function parseRunnerConfig(argv: string[], env: NodeJS.ProcessEnv): RunnerConfig {
  const values = parseFlags(argv, RUNNER_FLAGS);
  if (!(LOG_LEVELS as readonly string[]).includes(values["log-level"])) {
    throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
  }
  if (values["allow-run-as-root"] && !values["allow-run-as"]) throw new ConfigError("--allow-run-as-root goes with --allow-run-as");
  const fromSources = resolveSecret(
    { flag: { name: "token", value: values.token }, fileFlag: { name: "token-file", value: values["token-file"] }, fileVariable: "RUNNER_TOKEN_FILE", variable: "RUNNER_TOKEN" },
    env,
  );
  const given = fromSources?.secret;
  if (given !== undefined && given.trim() === "" && !values.insecure) throw new ConfigError("the runner token must not be empty");
  const token = values.insecure ? undefined : (given ?? randomBytes(24).toString("base64url"));
  const retainBytes = integerFlag("retain-bytes", values["retain-bytes"], 1);
  const tls = tlsFilesFrom(values["tls-cert"], values["tls-key"], values["tls-client-ca"]);
  return {
    host: values.host,
    port: integerFlag("port", values.port, 0, 65535),
    token,
    tokenGenerated: !values.insecure && given === undefined,
    tokenWarning: fromSources?.warning,
    allowRunAs: values["allow-run-as"],
    allowRunAsRoot: values["allow-run-as-root"],
    retainBytes,
    retainTotalBytes: integerFlag("retain-total-bytes", values["retain-total-bytes"], retainBytes),
    heartbeatMs: integerFlag("heartbeat-ms", values["heartbeat-ms"], 10),
    maxTerminals: integerFlag("max-terminals", values["max-terminals"], 1),
    maxMessageBytes: integerFlag("max-message-bytes", values["max-message-bytes"], MIN_MESSAGE_BYTES, MAX_ENVELOPE_LENGTH),
    maxConcurrentSpawns: integerFlag("max-concurrent-spawns", values["max-concurrent-spawns"], 1),
    maxQueuedSpawns: integerFlag("max-queued-spawns", values["max-queued-spawns"], 0),
    maxConnections: integerFlag("max-connections", values["max-connections"], 1),
    maxConnectionsPerAddress: integerFlag("max-connections-per-address", values["max-connections-per-address"], 1),
    handshakeTimeoutMs: integerFlag("handshake-timeout-ms", values["handshake-timeout-ms"], 10),
    idleTimeoutMs: integerFlag("idle-timeout-ms", values["idle-timeout-ms"], 0),
    closeGraceMs: integerFlag("close-grace-ms", values["close-grace-ms"], 0),
    processNice: integerFlag("process-nice", values["process-nice"], 0, MAX_NICE),
    metricsPort: values["metrics-port"] === undefined ? undefined : integerFlag("metrics-port", values["metrics-port"], 0, 65535),
    openReflection: values["open-reflection"],
    tls,
    tracing: tracingSettingsFromEnv(env, RUNNER_SERVICE_NAME),
    logLevel: values["log-level"],
    help: values.help,
  };
}

function tlsFilesFrom(cert: string | undefined, key: string | undefined, clientCa: string | undefined): ServerTlsFiles | undefined {
  if (cert === undefined && key === undefined) {
    if (clientCa !== undefined) throw new ConfigError("--tls-client-ca needs --tls-cert and --tls-key: client certificates are checked only over TLS");
    return undefined;
  }
  if (cert === undefined || key === undefined) throw new ConfigError("--tls-cert and --tls-key go together");
  return clientCa === undefined ? { cert, key } : { cert, key, clientCa };
}
