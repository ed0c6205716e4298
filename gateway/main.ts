import { configOrExit, exitOnStartupFailure, PACKAGE_VERSION } from "../lib/cli.js";
import { rethrowListenFailure } from "../lib/listen-failure.js";
import { startMetricsServer } from "../lib/metrics-server.js";
import { createLogger } from "../lib/logger.js";
import { stopOnSignals } from "../lib/shutdown.js";
import { startTracing } from "../lib/tracing.js";
import { http2ConnectOptionsFromTlsFiles } from "../lib/tls-client-options.js";
import { tlsServerOptionsFromFiles } from "../lib/tls-server-options.js";
import { AUTH_RESOURCE, tokenHolderAccess, usersFileAccess } from "./auth/access.js";
import { UserDirectory } from "./auth/user-directory.js";
import { runUsersCommand } from "./auth/users-cli.js";
import { GATEWAY_USAGE, parseGatewayConfig, REQUIRE_RUNNER_WAIT_MS } from "./config.js";
import { GatewayMetrics } from "./metrics.js";
import { connectRunner } from "./runners/runner-client.js";
import { requireAnsweringRunner } from "./runners/runner-check.js";
import { RunnerPool } from "./runners/runner-pool.js";
import { startGateway } from "./server.js";

/** How the runner TLS files are named in errors: by their flags. */
const RUNNER_TLS_FLAGS = { ca: "--runner-ca", cert: "--runner-cert", key: "--runner-key" };

/** Starts the gateway: the first stdout line is its WebSocket URL with the connection token. */
async function main(): Promise<void> {
  if (process.argv[2] === "users") {
    process.exitCode = runUsersCommand(process.argv.slice(3), process.env, { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
    return;
  }
  // TLS files are read here, so one that cannot serve stops the gateway before it listens.
  const config = configOrExit(GATEWAY_USAGE, () => {
    const parsed = parseGatewayConfig(process.argv.slice(2), process.env, process.cwd());
    return { ...parsed, serverTls: parsed.tls && tlsServerOptionsFromFiles(parsed.tls), runnerTlsOptions: http2ConnectOptionsFromTlsFiles(parsed.runnerTls, RUNNER_TLS_FLAGS) };
  });
  if (!config) return;
  const log = createLogger(config.logLevel, "gateway");
  for (const warning of config.tokenWarnings) log.warn(warning);
  const directory = config.usersFile ? UserDirectory.open(config.usersFile, log) : undefined;
  const tracing = config.tracing && (await startTracing(config.tracing, PACKAGE_VERSION, log));
  const runners = config.noRunner ? undefined : await RunnerPool.create(config.runnerUrls, { connect: (url) => connectRunner(url, config.runnerToken, config.runnerTlsOptions), log });
  if (runners && config.requireRunner) await requireAnsweringRunner(runners, REQUIRE_RUNNER_WAIT_MS);
  const metrics = new GatewayMetrics();
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
  }).catch(rethrowListenFailure({ port: `--port ${config.port}`, host: `--host ${config.host}` }));
  const metricsServer =
    config.metricsPort === undefined
      ? undefined
      : await startMetricsServer(metrics.registry, config.host, config.metricsPort).catch(async (err: unknown) => {
          await gateway.close();
          rethrowListenFailure({ port: `--metrics-port ${config.metricsPort}`, host: `--host ${config.host}` })(err);
        });
  process.stdout.write(`${gateway.url}\n`);
  log.info({ port: gateway.port, runners: runners?.list().map((runner) => runner.url) ?? [], metrics: metricsServer?.url }, "gateway listening");

  stopOnSignals(log, async () => {
    await gateway.close();
    await metricsServer?.close();
    await tracing?.shutdown();
  });
}

await exitOnStartupFailure("gateway", main);
