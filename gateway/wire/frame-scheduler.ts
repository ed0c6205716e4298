import type { WindowedSubscription } from "./windowed-subscription.js";

/** Unsent bytes on the socket above which frames wait for it to drain: the bound windowed delivery puts on the transport queue. */
const QUEUE_BYTES = 256 * 1024;
/** Frame characters written in one turn before yielding to the event loop, so one large message holds nothing else up for long. */
const TURN_CHARS = 32 * 1024;

/** Where frames go: the connection's outbox, and how much of what it wrote has not reached the socket yet. */
export interface FrameOutput {
  send(frame: string): void;
  readonly bufferedAmount: number;
}

/**
 * Sends one connection's windowed frames fairly: every subscription with something to send gets
 * one frame per round, so a small message on one channel is never stuck behind a large one on
 * another. It stops while the socket holds QUEUE_BYTES unsent (resumed by `drained`, which the
 * outbox calls as writes complete) and yields after TURN_CHARS per turn.
 */
export class FrameScheduler {
  private readonly active = new Set<WindowedSubscription>();
  private congested = false;
  private running = false;
  private disposed = false;
  private continuation: NodeJS.Immediate | undefined;

  constructor(private readonly out: FrameOutput) {}

  /** A subscription may have frames to send. */
  wake(subscription: WindowedSubscription): void {
    if (this.disposed) return;
    this.active.add(subscription);
    this.run();
  }

  /** A subscription is gone. */
  remove(subscription: WindowedSubscription): void {
    this.active.delete(subscription);
  }

  /** Some of what was written reached the socket. */
  drained(): void {
    if (!this.congested || this.out.bufferedAmount >= QUEUE_BYTES) return;
    this.congested = false;
    this.run();
  }

  /** Stops for good (the socket is gone). */
  dispose(): void {
    this.disposed = true;
    clearImmediate(this.continuation);
    this.active.clear();
  }

  private run(): void {
    if (this.running || this.congested || this.disposed) return;
    clearImmediate(this.continuation);
    this.continuation = undefined;
    this.running = true;
    let written = 0;
    try {
      while (this.active.size > 0) {
        for (const subscription of this.active) {
          const frame = subscription.nextFrame();
          if (frame === undefined) {
            this.active.delete(subscription);
            continue;
          }
          this.out.send(frame);
          written += frame.length;
          if (this.disposed) return;
          if (this.out.bufferedAmount >= QUEUE_BYTES) {
            this.congested = true;
            return;
          }
          if (written >= TURN_CHARS) {
            this.continuation = setImmediate(() => {
              this.continuation = undefined;
              this.run();
            });
            return;
          }
        }
      }
    } finally {
      this.running = false;
    }
  }
}
