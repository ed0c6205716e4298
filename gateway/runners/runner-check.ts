import { setTimeout as delay } from "node:timers/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import { Backoff } from "../../lib/backoff.js";
import { ConfigError } from "../../lib/cli.js";
import type { RunnerPool } from "./runner-pool.js";

/** Shortest pause between asks: a runner started at the same moment listens within a few of them. */
const ASK_MIN_DELAY_MS = 100;
/** Longest pause between asks, well inside the wait. */
const ASK_MAX_DELAY_MS = 1_000;

/**
 * Resolves once some runner of the pool answers a call that needs the runner token (List), asking
 * again with backoff for up to `waitMs`; otherwise throws the ConfigError (exit code
 * `runnerUnreachable`) that says which runner failed how and what to do. A runner that refuses the
 * token is reported at once: asking again cannot change its answer.
 */
export async function requireAnsweringRunner(pool: RunnerPool, waitMs: number): Promise<void> {
  const deadline = performance.now() + waitMs;
  const backoff = new Backoff({ minMs: ASK_MIN_DELAY_MS, maxMs: ASK_MAX_DELAY_MS });
  let last = "";
  for (;;) {
    const left = deadline - performance.now();
    for (const runner of pool.list()) {
      try {
        await runner.terminals.list({}, { timeoutMs: Math.max(1, Math.ceil(left)) });
        return;
      } catch (err) {
        const error = ConnectError.from(err);
        if (error.code === Code.Unauthenticated) {
          throw new ConfigError(
            `--runner ${runner.url} refuses the runner token (${error.rawMessage}); give the token it was started with (--runner-token-file, $RUNNER_TOKEN_FILE or $RUNNER_TOKEN)`,
            "runnerUnreachable",
          );
        }
        last = `${runner.url}: ${error.rawMessage}`;
      }
    }
    const pauseMs = Math.min(backoff.next(), deadline - performance.now());
    if (pauseMs <= 0) break;
    await delay(pauseMs);
  }
  throw new ConfigError(`--runner: no runner answered within ${waitMs / 1000} s (${last || "no runner given"}); start the runner first, or leave out --require-runner to start without one`, "runnerUnreachable");
}
