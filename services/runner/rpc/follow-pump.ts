import type { AttachRequest } from "../../../gen/terminal/v1/terminal_pb.js";
import { ChangeSignal } from "../../../lib/change-signal.js";
import type { Logger } from "../../../lib/logger.js";
import type { RunnerMetrics } from "../metrics.js";
import { AttachReader, type AttachStep } from "../terminal/attach-stream.js";
import { ChangeWaiter } from "../terminal/changed-within.js";
import type { FollowBatches } from "../terminal/follow-batches.js";
import type { TerminalRegistry } from "../terminal/terminal-registry.js";
import { connectErrorFrom } from "./connect-error.js";
import { wireFollowEnd, wireFollowEvent, type WireFollowEvent } from "./follow-wire.js";

/** FollowEnd's code for a follow that ended as an Attach stream ends normally (gRPC's OK). */
const ENDED_NORMALLY = 0;

/** Where a follow's events go, and what it needs to read its terminal. */
export interface FollowPumpContext {
  registry: TerminalRegistry;
  batches: FollowBatches<object, WireFollowEvent>;
  log: Logger;
  metrics?: RunnerMetrics;
}

/**
 * One follow of a Follow stream: its terminal's Attach events, moved into the stream's batches one at
 * a time while it is not paused and has room there, then its end. It moves them synchronously, from
 * the log's change to the batch, as the reader's steps allow: an async stream of events in between
 * (a generator and a wait per event) took about a fifth of the runner's main thread with 100 busy terminals.
 * A stopped follow sends nothing more; its reader is closed either way.
 */
export class FollowPump {
  private readonly controller = new AbortController();
  private paused = false;
  private readonly resumed = new ChangeSignal();

  constructor(
    readonly followId: number,
    private readonly attach: AttachRequest,
    private readonly context: FollowPumpContext,
  ) {}

  /** Stops moving the terminal's events (those already in a batch still go). */
  pause(): void {
    this.paused = true;
  }

  /** Moves them again. */
  resume(): void {
    this.paused = false;
    this.resumed.fire();
  }

  /** Ends the follow without anything more for it. */
  stop(): void {
    this.controller.abort();
  }

  /** Runs the follow to its end; resolves once its reader is closed. */
  async run(): Promise<void> {
    const { registry, batches, log, metrics } = this.context;
    const { attach, followId } = this;
    const { signal } = this.controller;
    let reader: AttachReader | undefined;
    metrics?.subscribers.inc();
    try {
      reader = new AttachReader(registry.get(attach.id), {
        fromOffset: Number(attach.fromOffset),
        untilOffset: attach.untilOffset === undefined ? undefined : Number(attach.untilOffset),
        follow: true,
        stripShellMarks: attach.stripShellMarks,
      });
      await this.pump(reader);
      if (signal.aborted) return;
      const end = wireFollowEnd(followId, ENDED_NORMALLY);
      batches.add(this, end, end.length);
    } catch (err) {
      if (signal.aborted) return;
      const { code, rawMessage } = connectErrorFrom(err, log, "Follow");
      const end = wireFollowEnd(followId, code, rawMessage);
      batches.add(this, end, end.length);
    } finally {
      reader?.close();
      metrics?.subscribers.dec();
    }
  }

  /**
   * Moves the reader's events into the batches until it is done (or the follow stopped). Each wait
   * (for the log's next change, a flood's gathering, room in the batches, a resume) has exactly one
   * continuation, so the reader is stepped by one caller at a time.
   */
  private pump(reader: AttachReader): Promise<void> {
    const { batches } = this.context;
    const { signal } = this.controller;
    const waiter = new ChangeWaiter(signal);
    return new Promise<void>((resolve, reject) => {
      let over = false;
      const finish = (failure?: { err: unknown }): void => {
        if (over) return;
        over = true;
        signal.removeEventListener("abort", stopped);
        waiter.close();
        if (failure) reject(failure.err);
        else resolve();
      };
      const stopped = (): void => finish();
      // A wait that ends by the follow's stop is not an error: `stopped` has settled the pump.
      const ignore = (): void => undefined;
      const afterChange = (): void => {
        if (over) return;
        const gathering = reader.gatherAfterWake(waiter);
        if (gathering) gathering.then(drain, ignore);
        else drain();
      };
      // The reader's last step, and how many of its events are in a batch.
      let step: AttachStep | undefined;
      let moved = 0;
      const drain = (): void => {
        try {
          for (;;) {
            if (over) return;
            if (this.paused) return void this.resumed.next().then(drain);
            if (!batches.hasRoom(this)) return void batches.room(this, signal).then(drain, ignore);
            if (step && moved < step.events.length) {
              const wire = wireFollowEvent(this.followId, step.events[moved++]!);
              batches.add(this, wire, wire.length);
              continue;
            }
            if (step?.next === "done") return finish();
            if (step?.next === "wait") {
              const { changed } = step;
              step = undefined;
              return void changed.then(afterChange);
            }
            step = reader.step();
            moved = 0;
          }
        } catch (err) {
          finish({ err });
        }
      };
      signal.addEventListener("abort", stopped, { once: true });
      drain();
    });
  }
}
