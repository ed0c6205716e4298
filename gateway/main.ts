import { configOrExit, PACKAGE_VERSION } from "../lib/cli.js";
import { startMetricsServer } from "../lib/metrics-server.js";
import { createLogger } from "../lib/logger.js";
import { stopOnSignals } from "../lib/shutdown.js";
import { startTracing } from "../lib/tracing.js";
import { http2ConnectOptionsFromTlsFiles } from "../lib/tls-client-options.js";
import { tlsServerOptionsFromFiles } from "../lib/tls-server-options.js";
import { AUTH_RESOURCE, tokenHolderAccess, usersFileAccess } from "./auth/access.js";
import { UserDirectory } from "./auth/user-directory.js";
import { runUsersCommand } from "./auth/users-cli.js";
import { GATEWAY_USAGE, parseGatewayConfig } from "./config.js";
import { GatewayMetrics } from "./metrics.js";
import { connectRunner } from "./runners/runner-client.js";
import { RunnerPool } from "./runners/runner-pool.js";
import { startGateway } from "./server.js";

/** Starts the gateway: the first stdout line is its WebSocket URL with the connection token. */
async function main(): Promise<void> {
  if (process.argv[2] === "users") {
    process.exitCode = runUsersCommand(process.argv.slice(3), process.env, { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
    return;
  }
  // TLS files are read here, so one that cannot serve is refused with the usage, as a bad flag is.
  const config = configOrExit("gateway", GATEWAY_USAGE, () => {
    const parsed = parseGatewayConfig(process.argv.slice(2), process.env, process.cwd());
    return { ...parsed, serverTls: parsed.tls && tlsServerOptionsFromFiles(parsed.tls), runnerTlsOptions: http2ConnectOptionsFromTlsFiles(parsed.runnerTls) };
  });
  if (!config) return;
  const log = createLogger(config.logLevel, "gateway");
  for (const warning of config.tokenWarnings) log.warn(warning);
  const tracing = config.tracing && (await startTracing(config.tracing, PACKAGE_VERSION, log));
  const runners = config.noRunner ? undefined : await RunnerPool.create(config.runnerUrls, { connect: (url) => connectRunner(url, config.runnerToken, config.runnerTlsOptions), log });
  const metrics = new GatewayMetrics();
  const directory = config.usersFile ? new UserDirectory(config.usersFile, log) : undefined;
  const shared = directory?.withoutUnixUser() ?? [];
  if (shared.length > 0) {
    log.warn({ users: shared }, "these users have no unixUser: their shells run as the services' own account and can reach the services' secrets (give each one with users add --unix-user, and start the runner with --allow-run-as)");
  }
  const gateway = await startGateway({
    host: config.host,
    port: config.port,
    token: config.token,
    maxFrameBytes: config.maxFrameBytes,
    socketLimits: config.socketLimits,
    allowedHosts: config.allowedHosts,
    allowedOrigins: config.allowedOrigins,
    tls: config.serverTls,
    access: directory ? usersFileAccess(directory, AUTH_RESOURCE) : tokenHolderAccess(config.token, AUTH_RESOURCE),
    terminalLimits: config.terminalLimits,
    hostTerminalUser: config.hostTerminalUser,
    runners,
    log,
    metrics,
    scrollbackChars: config.scrollbackChars,
    defaultDirectory: config.defaultDirectory,
    shell: process.env.SHELL || "/bin/sh",
    version: PACKAGE_VERSION,
    console: config.console,
  });
  const metricsServer = config.metricsPort === undefined ? undefined : await startMetricsServer(metrics.registry, config.host, config.metricsPort);
  process.stdout.write(`${gateway.url}\n`);
  log.info({ port: gateway.port, runners: runners?.list().map((runner) => runner.url) ?? [], metrics: metricsServer?.url }, "gateway listening");

  stopOnSignals(log, async () => {
    await gateway.close();
    await metricsServer?.close();
    await tracing?.shutdown();
  });
}

await main();
