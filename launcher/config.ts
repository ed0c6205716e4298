import { ConfigError, integerFlag, parseFlags } from "../lib/cli.js";
import { LOG_LEVELS } from "../lib/logger.js";
import { GATEWAY_FLAGS } from "../gateway/config.js";
import { RUNNER_FLAGS } from "../services/runner/config.js";
import { routeFlags, type Children } from "./flag-routing.js";

/** What `npm start` is configured with: where each process listens, the token files given, and the flags each child gets. */
export interface StartConfig {
  logLevel: string;
  host: string;
  port: number;
  runnerPort: number;
  tokenFile: string | undefined;
  runnerTokenFile: string | undefined;
  runnerArgs: string[];
  gatewayArgs: string[];
  help: boolean;
}

/** The launcher's own flags. */
const OWN_FLAGS = {
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "7071" },
  "runner-port": { type: "string", default: "7070" },
  "token-file": { type: "string" },
  "runner-token-file": { type: "string" },
  "log-level": { type: "string", default: "info" },
  help: { type: "boolean", default: false },
} as const;

/** Flags of each child that `npm start` sets itself: where it listens, and how the two find and trust each other. */
const CHILDREN: Children = {
  runner: { flags: RUNNER_FLAGS, managed: ["port", "token", "token-file", "insecure"] },
  gateway: { flags: GATEWAY_FLAGS, managed: ["host", "port", "token", "token-file", "runner", "runner-token", "runner-token-file", "no-runner", "require-runner"] },
};

/** The flags, their defaults and what they do, as `--help` prints them. */
export const START_USAGE = `Usage: npm start -- [flags] [--runner.FLAG ...] [--gateway.FLAG ...]
  --host HOST                address the gateway binds (default 127.0.0.1; the runner binds loopback)
  --port PORT                the gateway's port (default 7071)
  --runner-port PORT         the runner's port (default 7070)
  --token-file FILE          the gateway's connection token (default: $GATEWAY_TOKEN_FILE, else $GATEWAY_TOKEN, else generated)
  --runner-token-file FILE   the runner's bearer token (default: $RUNNER_TOKEN_FILE, else $RUNNER_TOKEN, else generated)
  --log-level LEVEL          ${LOG_LEVELS.join(", ")} for npm start and both processes (default info;
                             --runner.log-level and --gateway.log-level set one process's)
  --version, --help
0 picks a free port (kept across restarts). Any runner or gateway flag passes on: bare when only one of
them has it (--allow-run-as goes to the runner, --users to the gateway), as --runner.FLAG or
--gateway.FLAG when both have it (--runner.metrics-port 9464 --gateway.metrics-port 9465). Tokens given
in the environment or generated are written to files only you can read, and the children read them there.`;

/** Reads `npm start`'s arguments into a configuration; throws ConfigError with a readable message. */
export function parseStartConfig(argv: string[]): StartConfig {
  const routed = routeFlags(argv, OWN_FLAGS, CHILDREN);
  const values = parseFlags(routed.own, OWN_FLAGS);
  const logLevel = values["log-level"];
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
  return {
    logLevel,
    host: values.host,
    port: integerFlag("port", values.port, 0, 65535),
    runnerPort: integerFlag("runner-port", values["runner-port"], 0, 65535),
    tokenFile: values["token-file"],
    runnerTokenFile: values["runner-token-file"],
    // First, so a --runner.log-level or --gateway.log-level given after it wins.
    runnerArgs: ["--log-level", logLevel, ...routed.runner],
    gatewayArgs: ["--log-level", logLevel, ...routed.gateway],
    help: values.help,
  };
}
