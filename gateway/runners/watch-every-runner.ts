import type { Logger } from "../../lib/logger.js";
import type { Runner } from "./runner-client.js";
import type { RunnerPool } from "./runner-pool.js";
import { watchRunner, type RunnerRecordSink } from "./runner-watch.js";

/** How long startup waits for the runners' records before serving anyway (watching goes on in the background). */
const FIRST_SYNC_WAIT_MS = 3_000;

/**
 * Watches every runner's record of its terminals into `sink`, those of runners discovered later
 * too, until `signal` aborts, so a gateway can start before its runners, a restarted gateway serves
 * what it served before, and every gateway over the same runners sees the same terminals. Resolves
 * once each runner's record has been read once, or after a short wait, so clients that come back
 * at once usually find their terminals.
 */
export async function watchEveryRunner(sink: RunnerRecordSink, pool: RunnerPool, log: Logger, signal: AbortSignal): Promise<void> {
  const watch = (runner: Runner, synced?: () => void): void =>
    void watchRunner(runner, sink, { log, signal, synced }).catch((err: unknown) => log.error({ err, runner: runner.url }, "watching the runner failed"));
  const first = pool.list().map((runner) => new Promise<void>((synced) => watch(runner, synced)));
  pool.onAdded((runner) => watch(runner));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(first), new Promise((resolve) => (timer = setTimeout(resolve, FIRST_SYNC_WAIT_MS)))]);
  clearTimeout(timer);
}
