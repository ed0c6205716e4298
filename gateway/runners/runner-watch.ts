import { setTimeout as delay } from "node:timers/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import { ChangeKind, type TerminalInfo } from "../../gen/terminal/v1/terminal_pb.js";
import { Backoff } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import type { Runner } from "./runner-client.js";

/** What keeps a gateway's view of a runner's terminals: told the whole record, then each change to it. */
export interface RunnerRecordSink {
  /**
   * Every terminal the runner holds now: what the gateway knew of that runner before is replaced.
   * `restarted`: the runner is a new instance (a new epoch), so the terminals it had died with the old one.
   */
  listed(runner: Runner, terminals: readonly TerminalInfo[], restarted: boolean): void;
  /** One change to one terminal's record (its info after the change). */
  changed(runner: Runner, kind: ChangeKind, terminal: TerminalInfo): void;
}

/** Shortest pause before watching again after the stream broke: a runner that lives is back at once. */
const REWATCH_MIN_DELAY_MS = 100;
/** Longest pause between attempts: a runner that is down is not called in a tight loop, and one that comes back is seen within seconds. */
const REWATCH_MAX_DELAY_MS = 5_000;

/**
 * Follows a runner's record of its terminals (its Watch stream) into `sink` until `signal` aborts:
 * the full list first, then every change. A broken stream is resumed from the last sequence seen
 * (the runner sends only what was missed, or the full list again when it restarted or no longer
 * holds the changes), with backoff while the runner is down. `synced` is called after each full
 * list or accepted resume. A runner too old to watch is listed once, with a warning.
 */
export async function watchRunner(runner: Runner, sink: RunnerRecordSink, options: { log: Logger; signal: AbortSignal; synced?: () => void }): Promise<void> {
  const { log, signal } = options;
  const backoff = new Backoff({ minMs: REWATCH_MIN_DELAY_MS, maxMs: REWATCH_MAX_DELAY_MS });
  let epoch = "";
  let sequence = 0n;
  let broken = false;
  while (!signal.aborted) {
    try {
      let listed: TerminalInfo[] = [];
      for await (const message of runner.terminals.watch({ resumeEpoch: epoch, resumeAfterSequence: sequence }, { signal })) {
        const { event } = message;
        switch (event.case) {
          case "listed":
            listed.push(...event.value.terminals);
            break;
          case "synced":
            backoff.reset();
            if (broken) log.info({ runner: runner.url, resumed: event.value.resumed }, "watching the runner again");
            broken = false;
            if (!event.value.resumed) sink.listed(runner, listed, epoch !== "" && event.value.epoch !== epoch);
            epoch = event.value.epoch;
            sequence = message.sequence;
            listed = [];
            options.synced?.();
            break;
          case "changed":
            sequence = message.sequence;
            if (event.value.terminal) sink.changed(runner, event.value.kind, event.value.terminal);
            break;
          default:
            break;
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      const error = ConnectError.from(err);
      if (error.code === Code.Unimplemented) return listOnce(runner, sink, options);
      // A runner going away (restarted, redeployed) is routine: its first break is info, the attempts after it debug.
      log[broken ? "debug" : "info"]({ runner: runner.url, err: error.message }, broken ? "runner watch still broken; trying again" : "runner watch broke; watching again");
      broken = true;
    }
    // An abort ends the pause early; the loop then sees the aborted signal and stops.
    await delay(backoff.next(), undefined, { signal }).catch((err: unknown) => {
      if (!signal.aborted) throw err;
    });
  }
}

async function listOnce(runner: Runner, sink: RunnerRecordSink, options: { log: Logger; synced?: () => void }): Promise<void> {
  options.log.warn({ runner: runner.url }, "this runner cannot be watched (it predates Watch): its terminals are listed once, and changes other gateways make to them are not seen");
  const { terminals } = await runner.terminals.list({});
  sink.listed(runner, terminals, false);
  options.synced?.();
}
