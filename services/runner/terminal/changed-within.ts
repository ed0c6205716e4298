/** Runs `task` after `ms` and returns what cancels it. */
export type Timer = (ms: number, task: () => void) => () => void;

const eventLoopTimer: Timer = (ms, task) => {
  const timer = setTimeout(task, ms);
  return () => clearTimeout(timer);
};

/**
 * Resolves true when `changed` settles within `ms` (Infinity: no time limit), false when the time
 * runs out first; rejects with the signal's reason when it aborts. `timer` counts the time (tests step it).
 * For a single wait; a reader that waits again and again keeps a ChangeWaiter.
 */
export function changedWithin(changed: Promise<void>, ms: number, signal: AbortSignal, timer: Timer = eventLoopTimer): Promise<boolean> {
  const waiter = new ChangeWaiter(signal, timer);
  return waiter.wait(changed, ms).finally(() => waiter.close());
}

/**
 * `changedWithin` for one reader that waits again and again on the same signal: one abort listener
 * for all its waits, where adding and removing one for every wait cost a tenth of the runner's CPU
 * with 100 busy terminals. One wait at a time; `close` when the reader is done.
 */
export class ChangeWaiter {
  private waiting: { settle: (changed: boolean) => void; fail: (err: unknown) => void } | undefined;
  private readonly aborted = (): void => this.waiting?.fail(this.signal.reason);

  constructor(
    private readonly signal: AbortSignal,
    private readonly timer: Timer = eventLoopTimer,
  ) {
    signal.addEventListener("abort", this.aborted, { once: true });
  }

  /** Resolves true when `changed` settles within `ms` (Infinity: no time limit), false when the time runs out first; rejects when the signal aborts. */
  wait(changed: Promise<void>, ms: number): Promise<boolean> {
    if (this.signal.aborted) return Promise.reject(this.signal.reason);
    return new Promise((resolve, reject) => {
      let cancelTimer: (() => void) | undefined;
      const finish = (settle: () => void): void => {
        if (this.waiting !== waiting) return;
        this.waiting = undefined;
        cancelTimer?.();
        settle();
      };
      const waiting = { settle: (changed: boolean) => finish(() => resolve(changed)), fail: (err: unknown) => finish(() => reject(err)) };
      this.waiting = waiting;
      if (ms !== Number.POSITIVE_INFINITY) cancelTimer = this.timer(ms, () => waiting.settle(false));
      void changed.then(() => waiting.settle(true));
    });
  }

  /** Stops listening to the signal. */
  close(): void {
    this.signal.removeEventListener("abort", this.aborted);
  }
}
