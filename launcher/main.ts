import { freePort } from "../lib/listen.js";
import { configOrExit, integerFlag, parseFlags } from "../lib/cli.js";
import { createLogger } from "../lib/logger.js";
import { GATEWAY_FLAGS } from "../gateway/config.js";
import { RUNNER_FLAGS } from "../services/runner/config.js";
import { routeFlags, type Children } from "./flag-routing.js";
import { prepareServiceTokens } from "./service-tokens.js";
import { Supervised } from "./supervised.js";

/** The launcher's own flags. */
const OWN_FLAGS = {
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "7071" },
  "runner-port": { type: "string", default: "7070" },
  "token-file": { type: "string" },
  "runner-token-file": { type: "string" },
  help: { type: "boolean", default: false },
} as const;

/** Flags of each child that `npm start` sets itself: where it listens, and how the two find and trust each other. */
const CHILDREN: Children = {
  runner: { flags: RUNNER_FLAGS, managed: ["port", "token", "token-file", "insecure"] },
  gateway: { flags: GATEWAY_FLAGS, managed: ["host", "port", "token", "token-file", "runner", "runner-token", "runner-token-file", "no-runner"] },
};

/** Variables that carry the services' tokens: never handed on (each child reads its tokens from files). */
const TOKEN_VARIABLES = ["RUNNER_TOKEN", "GATEWAY_TOKEN", "RUNNER_TOKEN_FILE", "GATEWAY_TOKEN_FILE"] as const;

const USAGE = `Usage: npm start -- [flags] [--runner.FLAG ...] [--gateway.FLAG ...]
  --host HOST                address the gateway binds (default 127.0.0.1; the runner binds loopback)
  --port PORT                the gateway's port (default 7071)
  --runner-port PORT         the runner's port (default 7070)
  --token-file FILE          the gateway's connection token (default: $GATEWAY_TOKEN_FILE, else $GATEWAY_TOKEN, else generated)
  --runner-token-file FILE   the runner's bearer token (default: $RUNNER_TOKEN_FILE, else $RUNNER_TOKEN, else generated)
  --version, --help
0 picks a free port (kept across restarts). Any runner or gateway flag passes on: bare when only one of
them has it (--allow-run-as goes to the runner, --users to the gateway), as --runner.FLAG or
--gateway.FLAG when both have it (--runner.metrics-port 9464 --gateway.metrics-port 9465). Tokens given
in the environment or generated are written to files only you can read, and the children read them there.`;

async function main(): Promise<void> {
  const config = configOrExit("start", USAGE, () => {
    const routed = routeFlags(process.argv.slice(2), OWN_FLAGS, CHILDREN);
    const values = parseFlags(routed.own, OWN_FLAGS);
    return {
      host: values.host,
      port: integerFlag("port", values.port, 0, 65535),
      runnerPort: integerFlag("runner-port", values["runner-port"], 0, 65535),
      tokenFile: values["token-file"],
      runnerTokenFile: values["runner-token-file"],
      runnerArgs: routed.runner,
      gatewayArgs: routed.gateway,
      help: values.help,
    };
  });
  if (!config) return;
  const log = createLogger("info", "start");
  // Fixed here, so a restarted child comes back with the same token and the printed URL stays valid.
  const tokens = prepareServiceTokens({ runnerTokenFile: config.runnerTokenFile, gatewayTokenFile: config.tokenFile }, process.env);
  const runnerPort = config.runnerPort || (await freePort("127.0.0.1"));
  const gatewayPort = config.port || (await freePort(config.host));
  const childEnv = Object.fromEntries(TOKEN_VARIABLES.map((name) => [name, undefined]));
  const runner = new Supervised("runner", "services/runner/main", ["--port", String(runnerPort), "--token-file", tokens.runnerTokenFile, ...config.runnerArgs], childEnv, log);
  let runnerUrl: string;
  let gatewayUrl: string;
  let gateway: Supervised;
  try {
    runnerUrl = await runner.start();
    const gatewayArgs = ["--host", config.host, "--port", String(gatewayPort), "--runner", runnerUrl, "--token-file", tokens.gatewayTokenFile, "--runner-token-file", tokens.runnerTokenFile];
    gateway = new Supervised("gateway", "gateway/main", [...gatewayArgs, ...config.gatewayArgs], childEnv, log);
    gatewayUrl = await gateway.start();
  } catch (err) {
    // A child that could not start leaves nothing behind: the other one is stopped too.
    log.error({ err: (err as Error).message }, "could not start; stopping");
    await runner.stop("SIGTERM");
    tokens.remove();
    process.exitCode = 1;
    return;
  }
  // First line: the AHP endpoint (what scripts read); then the same address for a browser, and the runner's.
  process.stdout.write(`${gatewayUrl}\nconsole: ${gatewayUrl.replace(/^ws/, "http")}\nrunner: ${runnerUrl} (its bearer token is in ${tokens.runnerTokenFile}, readable by this account only)\n`);
  const stop = (signal: NodeJS.Signals): void => {
    log.info({ signal }, "stopping runner and gateway");
    void gateway.stop(signal);
    void runner.stop(signal);
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  await Promise.all([runner.stopped, gateway.stopped]);
  tokens.remove();
}

await main();
