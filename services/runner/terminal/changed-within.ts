/** Resolves true when `changed` settles within `ms`, false when the time runs out first; rejects with the signal's reason when it aborts. */
export function changedWithin(changed: Promise<void>, ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => finish(() => reject(signal.reason));
    const timer = setTimeout(() => finish(() => resolve(false)), ms);
    const finish = (settle: () => void): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      settle();
    };
    signal.addEventListener("abort", onAbort);
    void changed.then(() => finish(() => resolve(true)));
  });
}
