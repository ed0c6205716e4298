/**
 * An async iterable fed by `push`: what a client-streaming or bidi call reads its requests from.
 * Items pushed before anyone iterates wait; `end` finishes the iteration once they are taken. One reader.
 */
export class Pushable<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  /** Queues an item (ignored once ended). */
  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake?.();
  }

  /** No more items: the iteration ends after the queued ones. */
  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.items.length > 0) {
        const items = this.items;
        this.items = [];
        yield* items;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
