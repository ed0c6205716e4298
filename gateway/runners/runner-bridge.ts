import { Code, ConnectError } from "@connectrpc/connect";
import { setTimeout as delay } from "node:timers/promises";
import { Backoff } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import { pathToFileURL } from "node:url";
import type { TerminalAction } from "../../ahp/types.js";
import type { TerminalEvents } from "./follow-mux.js";
import { titleFromProgram } from "../../lib/titles.js";
import { Utf8Stream } from "../../lib/utf8-stream.js";

/** Shortest pause before re-attaching after the runner stream broke: a stream that broke while its runner lives is back almost at once. */
const REATTACH_MIN_DELAY_MS = 100;
/** Longest pause between re-attach attempts: a runner that is down is not called in a tight loop, and a restarted one is followed within seconds. */
const REATTACH_MAX_DELAY_MS = 5_000;

/**
 * The one place runner events become AHP actions. It follows one runner terminal from offset 0:
 * output bytes go through a streaming UTF-8 decoder (a character split across chunks is joined,
 * never replaced); the runner leaves their shell-integration sequences out, which arrive as command
 * and cwd events instead; titles and sizes become their actions, and `exited` becomes `terminal/exited`
 * once the runner says all output is in. Output is taken at the pace of the fastest subscriber. A broken stream is re-attached from the end offset of the last output with
 * backoff; a terminal the runner no longer knows is reported exited without a code. Resolves when
 * the terminal has exited or `signal` is aborted. `caughtUp` is called once everything the runner
 * held when it was listed (`until`: its end offset, and its exit if it had exited) has become actions.
 * Each `terminal/data` is emitted with the runner offset its text ends at: the output's end, less the
 * first bytes of a character the decoder holds until the next output completes it.
 */
export async function followRunnerTerminal(
  runner: TerminalEvents,
  runnerId: string,
  emit: (action: TerminalAction, outputOffset?: number) => void,
  options: {
    log: Logger;
    signal: AbortSignal;
    waitForRoom: () => Promise<void>;
    until?: { offset: number; exited: boolean };
    caughtUp?: () => void;
    /** Told the runner offset the text emitted so far ends at, right after emitting it (a screen of the terminal is rendered there). */
    reachedOffset?: (offset: number) => void;
  },
): Promise<void> {
  const { log, signal } = options;
  let offset = 0;
  let caughtUp = options.caughtUp;
  const reached = (exited: boolean): void => {
    if (!caughtUp || (!exited && (options.until?.exited || offset < (options.until?.offset ?? 0)))) return;
    caughtUp();
    caughtUp = undefined;
  };
  reached(false);
  const utf8 = new Utf8Stream();
  const data = (text: string, textEnd: number): void => {
    if (text) emit({ type: "terminal/data", data: text }, textEnd);
  };
  const backoff = new Backoff({ minMs: REATTACH_MIN_DELAY_MS, maxMs: REATTACH_MAX_DELAY_MS });
  // A runner going away (restarted, redeployed) is routine: its first break is info, the attempts after it debug.
  let broken = false;
  while (!signal.aborted) {
    try {
      for await (const { offset: at, event } of runner.attach({ id: runnerId, fromOffset: BigInt(offset), follow: true, stripShellMarks: true }, { signal })) {
        backoff.reset();
        broken = false;
        switch (event.case) {
          case "output": {
            // The log range this output covers, marks left out included: where a re-attach goes on. A runner
            // from before `end_offset` sends none (0) and strips nothing: its output covers its own bytes.
            offset = Number(event.value.endOffset) || Number(at) + event.value.data.length;
            const text = utf8.decode(event.value.data);
            const textEnd = offset - utf8.held;
            data(text, textEnd);
            options.reachedOffset?.(textEnd);
            reached(false);
            // Taking the next output only when a subscriber has room leaves a flood waiting in the runner.
            await options.waitForRoom();
            break;
          }
          case "gap":
            log.warn({ terminal: runnerId, from: Number(event.value.fromOffset), to: Number(event.value.toOffset) }, "runner output evicted before the gateway read it");
            offset = Number(event.value.toOffset);
            utf8.reset();
            options.reachedOffset?.(offset);
            reached(false);
            break;
          case "resized":
            emit({ type: "terminal/resized", cols: event.value.cols, rows: event.value.rows });
            break;
          case "titleChanged":
            // Whatever runner reported it, a program's title passes the one title rule before any client sees it.
            emit({ type: "terminal/titleChanged", title: titleFromProgram(event.value.title) });
            break;
          case "commandDetectionAvailable":
            emit({ type: "terminal/commandDetectionAvailable" });
            break;
          case "commandExecuted": {
            const { commandId, commandLine, timestampMs } = event.value;
            emit({ type: "terminal/commandExecuted", commandId, commandLine, timestamp: Number(timestampMs) });
            break;
          }
          case "commandFinished": {
            const { commandId, exitCode, durationMs } = event.value;
            emit(
              exitCode === undefined
                ? { type: "terminal/commandFinished", commandId, durationMs: Number(durationMs) }
                : { type: "terminal/commandFinished", commandId, exitCode, durationMs: Number(durationMs) },
            );
            break;
          }
          case "cwdChanged":
            emit({ type: "terminal/cwdChanged", cwd: pathToFileURL(event.value.cwd).href });
            break;
          case "exited": {
            // Bytes of a character that never completed come out as U+FFFD: the text now ends where the output does.
            data(utf8.end(), offset);
            options.reachedOffset?.(offset);
            const { exitCode, signal: killedBy } = event.value;
            emit(killedBy ? { type: "terminal/exited", exitCode, signal: killedBy } : { type: "terminal/exited", exitCode });
            reached(true);
            return;
          }
          default:
            break;
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (ConnectError.from(err).code === Code.NotFound) {
        log.warn({ terminal: runnerId }, "the runner no longer has this terminal; reporting it exited");
        emit({ type: "terminal/exited" });
        reached(true);
        return;
      }
      log[broken ? "debug" : "info"]({ terminal: runnerId, err: ConnectError.from(err).message }, broken ? "runner stream still broken; re-attaching" : "runner stream broke; re-attaching");
      broken = true;
    }
    // An abort ends the pause early; the loop then sees the aborted signal and stops.
    await delay(backoff.next(), undefined, { signal }).catch((err: unknown) => {
      if (!signal.aborted) throw err;
    });
  }
}
