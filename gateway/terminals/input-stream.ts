import { ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../lib/logger.js";
import type { RunnerClient } from "../runners/runner-client.js";

/** Bytes to send, or a change (a resize) that input written after it must wait for. */
type Entry = { data: Uint8Array } | { barrier: Promise<unknown> };

/**
 * A terminal's input to the runner over one long-lived WriteStream, opened at the first write: a
 * keystroke costs a stream message, not a call. Writes keep their order, and input written after a
 * resize reaches the process only once the resize has (so `stty size` typed after it sees the new
 * size). When the stream ends with an error (the process exited, the runner went away), later
 * writes go as single Write calls, still in order, so nothing is lost silently and failures are logged.
 */
export class InputStream {
  private queue: Entry[] = [];
  private wake: (() => void) | undefined;
  private open = false;
  private broken = false;
  private ended = false;
  private fallback: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly runner: RunnerClient,
    private readonly id: string,
    private readonly log: Logger,
  ) {}

  /** Sends bytes to the terminal's input. */
  write(data: Uint8Array): void {
    this.enqueue({ data });
  }

  /**
   * Holds input written from now on until `change` settles; input written before it is not held.
   * Changes must settle in the order given (the terminal's effect queue runs them so).
   */
  after(change: Promise<unknown>): void {
    this.enqueue({ barrier: change.catch(() => undefined) });
  }

  /** Ends the stream (the terminal is gone). */
  close(): void {
    this.ended = true;
    this.wake?.();
  }

  private enqueue(entry: Entry): void {
    if (this.ended) return;
    if (this.broken) {
      this.fallback = this.fallback
        .then(() => ("data" in entry ? this.runner.write({ id: this.id, data: entry.data }) : entry.barrier))
        .catch((err: unknown) => this.log.warn({ terminal: this.id, err: ConnectError.from(err).message }, "runner refused input"));
      return;
    }
    const last = this.queue.at(-1);
    // Changes settle in order, so a newer barrier covers an older one still waiting: the queue stays short.
    if (last && "barrier" in last && "barrier" in entry) this.queue[this.queue.length - 1] = entry;
    else this.queue.push(entry);
    this.wake?.();
    if (!this.open && "data" in entry) this.start();
  }

  private start(): void {
    this.open = true;
    this.runner.writeStream(this.messages()).catch((err: unknown) => {
      this.broken = true;
      if (!this.ended) this.log.debug({ terminal: this.id, err: ConnectError.from(err).message }, "input stream ended; writing call by call");
      // Whatever the stream had not taken yet still goes out, in order.
      for (const entry of this.queue.splice(0)) this.enqueue(entry);
    });
  }

  private async *messages(): AsyncGenerator<{ id: string; data: Uint8Array }> {
    for (;;) {
      const entry = this.queue.shift();
      if (entry && "data" in entry) {
        yield { id: this.id, data: entry.data };
        continue;
      }
      if (entry) {
        await entry.barrier;
        continue;
      }
      if (this.ended || this.broken) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
