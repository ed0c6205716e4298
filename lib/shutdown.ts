import type { Logger } from "./logger.js";

/** How long a graceful stop may take before the process exits anyway. */
export const STOP_DEADLINE_MS = 15_000;

/**
 * On the first SIGINT or SIGTERM: logs it, runs `stop` once (later signals are ignored while it
 * runs), logs "stopped" and exits 0; if stopping takes longer than the deadline, exits 1.
 */
export function stopOnSignals(log: Logger, stop: () => Promise<void>, details: () => Record<string, unknown> = () => ({})): void {
  let stopping = false;
  const onSignal = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, ...details() }, "shutting down");
    setTimeout(() => {
      log.error({ deadlineMs: STOP_DEADLINE_MS }, "graceful stop took too long; exiting");
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    await stop();
    log.info("stopped");
    process.exit(0);
  };
  process.on("SIGINT", (signal) => void onSignal(signal));
  process.on("SIGTERM", (signal) => void onSignal(signal));
}
