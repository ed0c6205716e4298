import { ConnectError } from "@connectrpc/connect";
import type { Logger } from "../lib/logger.js";
import type { GatewayHost } from "./host.js";

/** First pause before asking an unreachable runner again; doubled each time. */
const RETRY_MIN_DELAY_MS = 200;
/** Longest pause between attempts. */
const RETRY_MAX_DELAY_MS = 5_000;

/**
 * Adopts the runner's terminals once the runner answers, retrying with backoff, so a gateway can
 * start before its runner and a restarted gateway picks up where the last one left off.
 */
export async function adoptWhenRunnerAnswers(host: GatewayHost, log: Logger, signal: AbortSignal): Promise<void> {
  for (let delay = RETRY_MIN_DELAY_MS; !signal.aborted; delay = Math.min(delay * 2, RETRY_MAX_DELAY_MS)) {
    try {
      const adopted = await host.adoptRunnerTerminals();
      log.info({ adopted }, "runner terminals adopted");
      return;
    } catch (err) {
      log.warn({ err: ConnectError.from(err).message, retryInMs: delay }, "cannot list the runner's terminals yet");
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}
