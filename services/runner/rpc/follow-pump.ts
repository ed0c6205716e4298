import type { AttachRequest } from "../../../gen/terminal/v1/terminal_pb.js";
import { ChangeSignal } from "../../../lib/change-signal.js";
import type { Logger } from "../../../lib/logger.js";
import type { RunnerMetrics } from "../metrics.js";
import { attachEvents, type AttachEvent } from "../terminal/attach-stream.js";
import { changedWithin } from "../terminal/changed-within.js";
import type { FollowBatches } from "../terminal/follow-batches.js";
import type { TerminalRegistry } from "../terminal/terminal-registry.js";
import { connectErrorFrom } from "./connect-error.js";
import { wireFollowEnd, wireFollowEvent, type WireFollowEvent } from "./follow-wire.js";

/** A follow has no heartbeats of its own (the stream sends them), so its waits need no timer. */
const FOLLOW_PUMP_HEARTBEAT_MS = Number.POSITIVE_INFINITY;
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
 * One follow of a Follow stream: its terminal's Attach events (heartbeats left out), pulled one at a
 * time while it is not paused and has room in the stream's batches, then its end. A stopped follow
 * sends nothing more; its reader is closed either way.
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

  /** Stops pulling the terminal's events (those already in a batch still go). */
  pause(): void {
    this.paused = true;
  }

  /** Pulls them again. */
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
    let events: AsyncGenerator<AttachEvent> | undefined;
    metrics?.subscribers.inc();
    try {
      events = attachEvents(registry.get(attach.id), {
        fromOffset: Number(attach.fromOffset),
        untilOffset: attach.untilOffset === undefined ? undefined : Number(attach.untilOffset),
        follow: true,
        stripShellMarks: attach.stripShellMarks,
        heartbeatMs: FOLLOW_PUMP_HEARTBEAT_MS,
        signal,
      });
      for (;;) {
        if (this.paused || !batches.hasRoom(this)) await this.mayPull(signal);
        const next = await events.next();
        signal.throwIfAborted();
        if (next.done) break;
        if (next.value.event.kind === "heartbeat") continue;
        const wire = wireFollowEvent(followId, next.value);
        batches.add(this, wire, wire.length);
      }
      const end = wireFollowEnd(followId, ENDED_NORMALLY);
      batches.add(this, end, end.length);
    } catch (err) {
      if (signal.aborted) return;
      const { code, rawMessage } = connectErrorFrom(err, log, "Follow");
      const end = wireFollowEnd(followId, code, rawMessage);
      batches.add(this, end, end.length);
    } finally {
      try {
        // A generator waiting at a yield (paused, or held for room) runs its cleanup only when returned.
        await events?.return(undefined);
      } finally {
        metrics?.subscribers.dec();
      }
    }
  }

  private async mayPull(signal: AbortSignal): Promise<void> {
    const { batches } = this.context;
    while (this.paused || !batches.hasRoom(this)) {
      if (this.paused) await changedWithin(this.resumed.next(), Number.POSITIVE_INFINITY, signal);
      else await batches.room(this, signal);
    }
  }
}
