/**
 * `source`, ending with `signal`'s reason as soon as it aborts, even while waiting for the next item.
 * A bidirectional handler blocked in `for await` over its requests would otherwise not notice a
 * server shutting down, and its client would see the connection cut (CANCELLED), not UNAVAILABLE.
 */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let onAbort = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => {});
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    // Not awaited: a source still waiting for its next item would hold this up.
    void iterator.return?.()?.catch(() => {});
  }
}
