import type { Logger } from "./logger.js";

/**
 * On the first SIGINT or SIGTERM: logs it, runs `stop` once (later signals are ignored while it
 * runs), logs "stopped" and exits 0.
 */
export function stopOnSignals(log: Logger, stop: () => Promise<void>, details: () => Record<string, unknown> = () => ({})): void {
  let stopping = false;
  const onSignal = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, ...details() }, "shutting down");
    await stop();
    log.info("stopped");
    process.exit(0);
  };
  process.on("SIGINT", (signal) => void onSignal(signal));
  process.on("SIGTERM", (signal) => void onSignal(signal));
}
