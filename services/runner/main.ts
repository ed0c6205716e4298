import { ConfigError, configOrExit, exitOnStartupFailure, PACKAGE_VERSION } from "../../lib/cli.js";
import { rethrowListenFailure } from "../../lib/listen-failure.js";
import { createLogger } from "../../lib/logger.js";
import { stopOnSignals } from "../../lib/shutdown.js";
import { startTracing } from "../../lib/tracing.js";
import { tlsServerOptionsFromFiles } from "../../lib/tls-server-options.js";
import { parseRunnerConfig, RUNNER_USAGE } from "./config.js";
import { startRunner } from "./start-runner.js";
import { startMetricsServer } from "../../lib/metrics-server.js";
import { RunnerMetrics } from "./metrics.js";
import { fileKeepingOptions } from "./process/file-keeping-options.js";
import { checkNiceProgram } from "./process/niceness.js";

/** Starts the runner: the first stdout line is its base URL; SIGINT or SIGTERM close every terminal, then the server. */
async function main(): Promise<void> {
  // The TLS files are read here, so one that cannot serve stops the runner before it listens.
  const config = configOrExit(RUNNER_USAGE, () => {
    const parsed = parseRunnerConfig(process.argv.slice(2), process.env);
    checkNiceProgram(parsed.processNice);
    return { ...parsed, tls: parsed.tls && tlsServerOptionsFromFiles(parsed.tls) };
  });
  if (!config) return;
  const keeping = fileKeepingOptions(process.execArgv, process.env.NODE_OPTIONS);
  if (keeping.length > 0) {
    throw new ConfigError(
      `${keeping.join(", ")}: V8 would keep a file open that the runner closes at start (no terminal may inherit a descriptor), then write into whatever reuses it; profile with --cpu-prof`,
    );
  }
  const log = createLogger(config.logLevel, "runner");
  if (config.tokenWarning) log.warn(config.tokenWarning);
  const tracing = config.tracing && (await startTracing(config.tracing, PACKAGE_VERSION, log));
  if (config.token === undefined) log.warn("--insecure: every RPC is accepted without a token; anyone who reaches the port can run commands");
  const metrics = new RunnerMetrics();
  const runner = await startRunner({
    ...config,
    runAs: { allowed: config.allowRunAs, allowRoot: config.allowRunAsRoot },
    env: process.env,
    cwd: process.cwd(),
    log,
    metrics,
  }).catch(rethrowListenFailure({ port: `--port ${config.port}`, host: `--host ${config.host}` }));
  const { server, registry } = runner;
  const metricsServer =
    config.metricsPort === undefined
      ? undefined
      : await startMetricsServer(metrics.registry, config.host, config.metricsPort).catch(async (err: unknown) => {
          await runner.close();
          rethrowListenFailure({ port: `--metrics-port ${config.metricsPort}`, host: `--host ${config.host}` })(err);
        });
  process.stdout.write(`${server.url}\n`);
  if (config.tokenGenerated) process.stdout.write(`RUNNER_TOKEN=${config.token}\n`);
  log.info(
    { url: server.url, auth: config.token !== undefined, runAs: config.allowRunAs, tls: config.tls !== undefined, clientCertificates: config.tls?.requestCert === true, openReflection: config.openReflection, metrics: metricsServer?.url },
    "runner listening",
  );

  stopOnSignals(
    log,
    async () => {
      await runner.close();
      await metricsServer?.close();
      await tracing?.shutdown();
    },
    () => ({ terminals: registry.size }),
  );
}

await exitOnStartupFailure("runner", main);
