import { configOrExit } from "../../lib/cli.js";
import { createLogger } from "../../lib/logger.js";
import { stopOnSignals } from "../../lib/shutdown.js";
import { tlsServerOptionsFromFiles } from "../../lib/tls-server-options.js";
import { parseRunnerConfig, RUNNER_USAGE } from "./config.js";
import { ServingState } from "./health-service.js";
import { createProcessLauncher } from "./process-launcher.js";
import { startMetricsServer } from "../../lib/metrics-server.js";
import { RunnerMetrics } from "./metrics.js";
import { RetentionBudget } from "./retention-budget.js";
import { startRunnerServer } from "./server.js";
import { TerminalRegistry } from "./terminal-registry.js";

/** Starts the runner: the first stdout line is its base URL; SIGINT or SIGTERM close every terminal, then the server. */
async function main(): Promise<void> {
  // The TLS files are read here, so one that cannot serve is refused with the usage, as a bad flag is.
  const config = configOrExit("runner", RUNNER_USAGE, () => {
    const parsed = parseRunnerConfig(process.argv.slice(2), process.env);
    return { ...parsed, tls: parsed.tls && tlsServerOptionsFromFiles(parsed.tls) };
  });
  if (!config) return;
  const log = createLogger(config.logLevel, "runner");
  if (config.token === undefined) log.warn("--insecure: every RPC is accepted without a token; anyone who reaches the port can run commands");
  const launcher = createProcessLauncher();
  if (!launcher.ptyAvailable) log.warn("node-pty did not load: terminals run on pipes");
  const metrics = new RunnerMetrics();
  const registry = new TerminalRegistry({
    metrics,
    launcher,
    host: { env: process.env, cwd: process.cwd() },
    budget: new RetentionBudget(config.retainTotalBytes),
    retainBytes: config.retainBytes,
    maxTerminals: config.maxTerminals,
    closeGraceMs: config.closeGraceMs,
  });
  metrics.countTerminalsWith(() => registry.size);
  const serving = new ServingState();
  const server = await startRunnerServer({ ...config, registry, serving, log, metrics });
  const metricsServer = config.metricsPort === undefined ? undefined : await startMetricsServer(metrics.registry, config.host, config.metricsPort);
  process.stdout.write(`${server.url}\n`);
  if (config.tokenGenerated) process.stdout.write(`RUNNER_TOKEN=${config.token}\n`);
  log.info(
    { url: server.url, auth: config.token !== undefined, tls: config.tls !== undefined, clientCertificates: config.tls?.requestCert === true, openReflection: config.openReflection, metrics: metricsServer?.url },
    "runner listening",
  );

  stopOnSignals(
    log,
    async () => {
      serving.stopServing();
      await registry.closeAll();
      await server.close();
      await metricsServer?.close();
    },
    () => ({ terminals: registry.size }),
  );
}

await main();
