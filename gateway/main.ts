import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { configOrExit } from "../lib/cli.js";
import { startMetricsServer } from "../lib/metrics-server.js";
import { createLogger } from "../lib/logger.js";
import { PACKAGE_ROOT } from "../lib/package-root.js";
import { stopOnSignals } from "../lib/shutdown.js";
import { adoptFromEveryRunner } from "./adoption.js";
import { AUTH_RESOURCE, tokenHolderAccess, usersFileAccess } from "./auth/access.js";
import { UserDirectory } from "./auth/user-directory.js";
import { runUsersCommand } from "./auth/users-cli.js";
import { ClientRegistry } from "./client-registry.js";
import { GATEWAY_USAGE, parseGatewayConfig } from "./config.js";
import { Connection } from "./connection.js";
import { consoleRoutes } from "./console-files.js";
import { GatewayHost } from "./host.js";
import { startListener } from "./listener.js";
import { GatewayMetrics } from "./metrics.js";
import { RunnerPool } from "./runner-pool.js";

/** How long /readyz waits for a runner's health check. */
const READY_CHECK_TIMEOUT_MS = 1_000;

/** Starts the gateway: the first stdout line is its WebSocket URL with the connection token. */
async function main(): Promise<void> {
  if (process.argv[2] === "users") {
    process.exitCode = runUsersCommand(process.argv.slice(3), process.env, { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
    return;
  }
  const config = configOrExit("gateway", GATEWAY_USAGE, () => parseGatewayConfig(process.argv.slice(2), process.env, process.cwd()));
  if (!config) return;
  const log = createLogger(config.logLevel, "gateway");
  const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string };
  const runners = config.noRunner ? undefined : await RunnerPool.create(config.runnerUrls, config.runnerToken, log);
  const metrics = new GatewayMetrics();
  const host = new GatewayHost({
    runners,
    metrics,
    shell: process.env.SHELL || "/bin/sh",
    log,
    scrollbackChars: config.scrollbackChars,
    defaultDirectory: config.defaultDirectory,
  });
  const access = config.usersFile
    ? usersFileAccess(new UserDirectory(config.usersFile, log), AUTH_RESOURCE)
    : tokenHolderAccess(config.token, AUTH_RESOURCE);
  const context = {
    metrics,
    host,
    clients: new ClientRegistry(),
    access,
    log,
    info: { serverInfo: { name: "ahp-terminal-gateway", version }, defaultDirectory: pathToFileURL(config.defaultDirectory).href },
  };
  const stopAdopting = new AbortController();
  if (runners) await adoptFromEveryRunner(host, runners, log, stopAdopting.signal);
  const listener = await startListener({
    host: config.host,
    port: config.port,
    token: config.token,
    maxFrameBytes: config.maxFrameBytes,
    routes: {
      ...(config.console ? consoleRoutes() : {}),
      "/healthz": async () => ({ status: 200, body: "ok\n" }),
      "/readyz": async () => ((await host.ready(READY_CHECK_TIMEOUT_MS)) ? { status: 200, body: "ready\n" } : { status: 503, body: "no runner answers\n" }),
    },
    accept(socket) {
      const connection = new Connection(socket, context);
      return { onFrame: (text) => connection.receive(text), onClose: () => connection.closedByPeer() };
    },
  });
  const metricsServer = config.metricsPort === undefined ? undefined : await startMetricsServer(metrics.registry, config.host, config.metricsPort);
  process.stdout.write(`${listener.url}\n`);
  log.info({ port: listener.port, runners: runners?.list().map((runner) => runner.url) ?? [], metrics: metricsServer?.url }, "gateway listening");
  if (runners) runners.keepDiscovering(stopAdopting.signal);

  stopOnSignals(log, async () => {
    stopAdopting.abort();
    host.close();
    await listener.close();
    await metricsServer?.close();
  });
}

await main();
