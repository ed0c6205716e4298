import { setTimeout as delay } from "node:timers/promises";
import { ConnectError } from "@connectrpc/connect";
import { Backoff } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import type { Runner } from "./runner-client.js";
import type { RunnerPool } from "./runner-pool.js";

/** What takes over a runner's terminals: the number adopted, or a failure when the runner cannot be asked. */
export interface Adopter {
  adopt(runner: Runner): Promise<number>;
}

/** Shortest pause before asking an unreachable runner again: short, so a runner started beside the gateway is adopted soon after it listens. */
const RETRY_MIN_DELAY_MS = 200;
/** Longest pause between attempts: a runner that is down is not asked in a tight loop, and one that comes back is adopted within seconds. */
const RETRY_MAX_DELAY_MS = 5_000;

/** How long startup waits for the first adoption before serving anyway (the rest continues in the background). */
const FIRST_ADOPTION_WAIT_MS = 3_000;

/**
 * Adopts every runner's terminals once that runner answers, retrying each with backoff, and those
 * of runners discovered later, so a gateway can start before its runners and a restarted gateway
 * picks up where the last one left off. Resolves when every runner was adopted or after a short
 * wait, so reconnecting clients usually find their terminals at once.
 */
export async function adoptFromEveryRunner(adopter: Adopter, pool: RunnerPool, log: Logger, signal: AbortSignal): Promise<void> {
  const first = Promise.all(pool.list().map((runner) => adoptWhenAnswering(adopter, runner, log, signal)));
  pool.onAdded((runner) => void adoptWhenAnswering(adopter, runner, log, signal));
  await Promise.race([first, new Promise((resolve) => setTimeout(resolve, FIRST_ADOPTION_WAIT_MS).unref())]);
}

async function adoptWhenAnswering(adopter: Adopter, runner: Runner, log: Logger, signal: AbortSignal): Promise<void> {
  const backoff = new Backoff({ minMs: RETRY_MIN_DELAY_MS, maxMs: RETRY_MAX_DELAY_MS });
  while (!signal.aborted) {
    const pauseMs = backoff.next();
    try {
      const adopted = await adopter.adopt(runner);
      log.info({ runner: runner.url, adopted }, "runner terminals adopted");
      return;
    } catch (err) {
      log.warn({ runner: runner.url, err: ConnectError.from(err).message, retryInMs: pauseMs }, "cannot list the runner's terminals yet");
    }
    // An abort ends the pause early; the loop then sees the aborted signal and stops.
    await delay(pauseMs, undefined, { signal }).catch((err: unknown) => {
      if (!signal.aborted) throw err;
    });
  }
}
