import { freePort } from "../lib/listen.js";
import { configOrExit, exitOnStartupFailure } from "../lib/cli.js";
import { EXIT_CODES } from "../lib/exit-codes.js";
import { rethrowListenFailure } from "../lib/listen-failure.js";
import { createLogger } from "../lib/logger.js";
import { parseStartConfig, START_USAGE } from "./config.js";
import { prepareServiceTokens } from "./service-tokens.js";
import { ChildStartFailure, Supervised } from "./supervised.js";

/** Variables that carry the services' tokens: never handed on (each child reads its tokens from files). */
const TOKEN_VARIABLES = ["RUNNER_TOKEN", "GATEWAY_TOKEN", "RUNNER_TOKEN_FILE", "GATEWAY_TOKEN_FILE"] as const;

/** Exit codes a child reports its own startup failure with (it said why on the stderr it shares): npm start exits with the same. */
const STARTUP_EXIT_CODES: ReadonlySet<number> = new Set(Object.values(EXIT_CODES));

async function main(): Promise<void> {
  const config = configOrExit(START_USAGE, () => parseStartConfig(process.argv.slice(2)));
  if (!config) return;
  const log = createLogger(config.logLevel, "start");
  // Fixed here, so a restarted child comes back with the same token and the printed URL stays valid;
  // a port given is tried here too, so one in use is reported under npm start's own flag.
  const runnerPort = await freePort("127.0.0.1", config.runnerPort).catch(rethrowListenFailure({ port: `--runner-port ${config.runnerPort}`, host: "--host 127.0.0.1" }));
  const gatewayPort = await freePort(config.host, config.port).catch(rethrowListenFailure({ port: `--port ${config.port}`, host: `--host ${config.host}` }));
  const tokens = prepareServiceTokens({ runnerTokenFile: config.runnerTokenFile, gatewayTokenFile: config.tokenFile }, process.env);
  const childEnv = Object.fromEntries(TOKEN_VARIABLES.map((name) => [name, undefined]));
  const runner = new Supervised("runner", "services/runner/main", ["--port", String(runnerPort), "--token-file", tokens.runnerTokenFile, ...config.runnerArgs], childEnv, log);
  let runnerUrl: string;
  let gatewayUrl: string;
  let gateway: Supervised;
  try {
    runnerUrl = await runner.start();
    const gatewayArgs = ["--host", config.host, "--port", String(gatewayPort), "--runner", runnerUrl, "--require-runner", "--token-file", tokens.gatewayTokenFile, "--runner-token-file", tokens.runnerTokenFile];
    gateway = new Supervised("gateway", "gateway/main", [...gatewayArgs, ...config.gatewayArgs], childEnv, log);
    gatewayUrl = await gateway.start();
  } catch (err) {
    // A child that could not start leaves nothing behind: the other one is stopped too. A child that
    // said why (its one line is on this stderr) sets the exit code; anything else is npm start's to say.
    await runner.stop("SIGTERM");
    tokens.remove();
    const code = err instanceof ChildStartFailure ? err.code : null;
    if (code !== null && STARTUP_EXIT_CODES.has(code)) {
      log.debug({ err: (err as Error).message }, "could not start; stopped");
      process.exitCode = code;
      return;
    }
    throw err;
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

await exitOnStartupFailure("start", main);
