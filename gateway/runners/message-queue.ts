import type { ConnectError } from "@connectrpc/connect";

/** What the queue holds back when its reader falls behind: the HTTP/2 stream the messages come from. */
export interface PausableSource {
  pause(): void;
  resume(): void;
}

/**
 * Messages waiting for their reader above which the source is paused, so the runner's HTTP/2 flow
 * control holds the rest back, as it does for connect's transport (which reads one message ahead).
 */
const PAUSE_ABOVE_MESSAGES = 4;
/** Waiting messages at or below which a paused source is read again, so the reader does not run dry. */
const RESUME_AT_MESSAGES = 1;

/**
 * A response's messages as they arrive, for one reader: a message pushed while the reader waits is
 * handed over in that turn; an error ends the queue after the messages before it were read.
 */
export class MessageQueue<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private waiting: { resolve(result: IteratorResult<T>): void; reject(error: ConnectError): void } | undefined;
  private ended = false;
  private error: ConnectError | undefined;
  private paused = false;

  constructor(private readonly source: PausableSource) {}

  /** Adds a message, or hands it to the waiting reader. */
  push(item: T): void {
    if (this.ended) return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting.resolve({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (!this.paused && this.items.length > PAUSE_ABOVE_MESSAGES) {
      this.paused = true;
      this.source.pause();
    }
  }

  /** No more messages: the reader gets those already here, then the end (or `error`). */
  end(error?: ConnectError): void {
    if (this.ended) return;
    this.ended = true;
    this.error = error;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (!waiting) return;
    if (error) waiting.reject(error);
    else waiting.resolve({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) {
      const value = this.items.shift() as T;
      if (this.paused && this.items.length <= RESUME_AT_MESSAGES) {
        this.paused = false;
        this.source.resume();
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.ended) return this.error ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
