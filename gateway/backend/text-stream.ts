/** Characters kept for readers that have not caught up; beyond it the oldest are dropped, with a note in their place. */
const MAX_BUFFERED_CHARS = 8 * 1024 * 1024;

/**
 * Text that arrives in pieces and is read as an async iterable, each reader from the start at its
 * own pace. Bounded: a reader far behind finds a note saying how much it missed instead of
 * holding the producer up or growing memory without end.
 */
export class TextStream implements AsyncIterable<string> {
  private chunks: string[] = [];
  private first = 0;
  private chars = 0;
  private dropped = 0;
  private ended = false;
  private wake: Array<() => void> = [];

  /** Adds a piece. */
  push(text: string): void {
    if (this.ended || text === "") return;
    this.chunks.push(text);
    this.chars += text.length;
    while (this.chars > MAX_BUFFERED_CHARS && this.chunks.length - this.first > 1) {
      const oldest = this.chunks[this.first]!;
      this.chunks[this.first] = "";
      this.first++;
      this.chars -= oldest.length;
      this.dropped += oldest.length;
    }
    this.notify();
  }

  /** No more pieces will come. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  /** Everything retained so far, joined. */
  text(): string {
    return this.chunks.slice(this.first).join("");
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    let next = 0;
    for (;;) {
      if (next < this.first) {
        yield `[${this.dropped} characters of output were dropped before they were read]`;
        next = this.first;
      }
      if (next < this.chunks.length) {
        yield this.chunks[next++]!;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => this.wake.push(resolve));
    }
  }

  private notify(): void {
    for (const resolve of this.wake.splice(0)) resolve();
  }
}
