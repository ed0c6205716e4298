/** Runs `task` after `ms` and returns what cancels it. */
export type Timer = (ms: number, task: () => void) => () => void;

const eventLoopTimer: Timer = (ms, task) => {
  const timer = setTimeout(task, ms);
  return () => clearTimeout(timer);
};

/**
 * Resolves true when `changed` settles within `ms` (Infinity: no time limit), false when the time
 * runs out first; rejects with the signal's reason when it aborts. `timer` counts the time (tests step it).
 */
export function changedWithin(changed: Promise<void>, ms: number, signal: AbortSignal, timer: Timer = eventLoopTimer): Promise<boolean> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => finish(() => reject(signal.reason));
    const cancelTimer = ms === Number.POSITIVE_INFINITY ? undefined : timer(ms, () => finish(() => resolve(false)));
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      cancelTimer?.();
      signal.removeEventListener("abort", onAbort);
      settle();
    };
    signal.addEventListener("abort", onAbort);
    void changed.then(() => finish(() => resolve(true)));
  });
}
