import { randomBytes } from "node:crypto";
import { freePort } from "../lib/listen.js";
import { configOrExit, integerFlag, parseFlags } from "../lib/cli.js";
import { createLogger } from "../lib/logger.js";
import { Supervised } from "./supervised.js";

/** `npm start`: the runner and the gateway as two processes sharing a freshly generated runner token. */
const USAGE = `Usage: npm start -- [--host HOST] [--port PORT] [--runner-port PORT]
  --host HOST          address the gateway binds (default 127.0.0.1; the runner always binds loopback)
  --port PORT          the gateway's port (default 7071)
  --runner-port PORT   the runner's port (default 7070)
0 picks a free port (kept across restarts). Other settings come from the environment both processes
inherit (GATEWAY_TOKEN, GATEWAY_USERS, SHELL, ...).`;

async function main(): Promise<void> {
  const config = configOrExit("start", USAGE, () => {
    const values = parseFlags(process.argv.slice(2), {
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "7071" },
      "runner-port": { type: "string", default: "7070" },
      help: { type: "boolean", default: false },
    });
    return {
      host: values.host,
      port: integerFlag("port", values.port, 0, 65535),
      runnerPort: integerFlag("runner-port", values["runner-port"], 0, 65535),
      help: values.help,
    };
  });
  if (!config) return;
  const log = createLogger("info", "start");
  const runnerToken = randomBytes(24).toString("base64url");
  // The gateway's connection token is fixed here too, so a restarted gateway keeps the printed URL valid.
  const gatewayToken = process.env.GATEWAY_TOKEN || randomBytes(24).toString("base64url");
  const runnerPort = config.runnerPort || (await freePort("127.0.0.1"));
  const gatewayPort = config.port || (await freePort(config.host));
  // Each child gets the tokens it needs and no more.
  const runner = new Supervised("runner", "services/runner/main", ["--port", String(runnerPort)], { RUNNER_TOKEN: runnerToken, GATEWAY_TOKEN: undefined }, log);
  let gatewayUrl: string;
  let gateway: Supervised;
  try {
    const runnerUrl = await runner.start();
    gateway = new Supervised("gateway", "gateway/main", ["--host", config.host, "--port", String(gatewayPort), "--runner", runnerUrl], { RUNNER_TOKEN: runnerToken, GATEWAY_TOKEN: gatewayToken }, log);
    gatewayUrl = await gateway.start();
  } catch (err) {
    // A child that could not start leaves nothing behind: the other one is stopped too.
    log.error({ err: (err as Error).message }, "could not start; stopping");
    await runner.stop("SIGTERM");
    process.exitCode = 1;
    return;
  }
  // First line: the AHP endpoint (what scripts read); second: the same address for a browser.
  process.stdout.write(`${gatewayUrl}\nconsole: ${gatewayUrl.replace(/^ws/, "http")}\n`);
  const stop = (signal: NodeJS.Signals): void => {
    log.info({ signal }, "stopping runner and gateway");
    void gateway.stop(signal);
    void runner.stop(signal);
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  await Promise.all([runner.stopped, gateway.stopped]);
}

await main();
