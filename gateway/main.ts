import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { configOrExit } from "../lib/cli.js";
import { createLogger } from "../lib/logger.js";
import { stopOnSignals } from "../lib/shutdown.js";
import { adoptWhenRunnerAnswers } from "./adoption.js";
import { AUTH_RESOURCE, tokenHolderAccess, usersFileAccess } from "./auth/access.js";
import { UserDirectory } from "./auth/user-directory.js";
import { runUsersCommand } from "./auth/users-cli.js";
import { ClientRegistry } from "./client-registry.js";
import { GATEWAY_USAGE, parseGatewayConfig } from "./config.js";
import { Connection } from "./connection.js";
import { GatewayHost } from "./host.js";
import { startListener } from "./listener.js";
import { createRunnerClient } from "./runner-client.js";

/** Starts the gateway: the first stdout line is its WebSocket URL with the connection token. */
async function main(): Promise<void> {
  if (process.argv[2] === "users") {
    process.exitCode = runUsersCommand(process.argv.slice(3), process.env, { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
    return;
  }
  const config = configOrExit("gateway", GATEWAY_USAGE, () => parseGatewayConfig(process.argv.slice(2), process.env, process.cwd()));
  if (!config) return;
  const log = createLogger(config.logLevel, "gateway");
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  const host = new GatewayHost({
    runner: config.noRunner ? undefined : createRunnerClient(config.runnerUrl, config.runnerToken),
    shell: process.env.SHELL || "/bin/sh",
    log,
    scrollbackChars: config.scrollbackChars,
    defaultDirectory: config.defaultDirectory,
  });
  const access = config.usersFile
    ? usersFileAccess(new UserDirectory(config.usersFile, log), AUTH_RESOURCE)
    : tokenHolderAccess(config.token, AUTH_RESOURCE);
  const context = {
    host,
    clients: new ClientRegistry(),
    access,
    log,
    info: { serverInfo: { name: "ahp-terminal-gateway", version }, defaultDirectory: pathToFileURL(config.defaultDirectory).href },
  };
  const listener = await startListener({
    host: config.host,
    port: config.port,
    token: config.token,
    maxFrameBytes: config.maxFrameBytes,
    accept(socket) {
      const connection = new Connection(socket, context);
      return { onFrame: (text) => connection.receive(text), onClose: () => connection.closedByPeer() };
    },
  });
  process.stdout.write(`${listener.url}\n`);
  log.info({ port: listener.port, runner: config.noRunner ? null : config.runnerUrl }, "gateway listening");
  const stopAdopting = new AbortController();
  void adoptWhenRunnerAnswers(host, log, stopAdopting.signal);

  stopOnSignals(log, async () => {
    stopAdopting.abort();
    host.close();
    await listener.close();
  });
}

await main();
