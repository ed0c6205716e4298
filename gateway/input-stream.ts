import { ConnectError } from "@connectrpc/connect";
import type { Logger } from "../lib/logger.js";
import type { RunnerClient } from "./runner-client.js";

/**
 * A terminal's input to the runner over one long-lived WriteStream, opened at the first write: a
 * keystroke costs a stream message, not a call. Writes keep their order. When the stream ends with
 * an error (the process exited, the runner went away), later writes go as single Write calls,
 * still in order, so nothing is lost silently and failures are logged.
 */
export class InputStream {
  private queue: Uint8Array[] = [];
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
    if (this.ended) return;
    if (this.broken) {
      this.fallback = this.fallback
        .then(() => this.runner.write({ id: this.id, data }))
        .catch((err: unknown) => this.log.warn({ terminal: this.id, err: ConnectError.from(err).message }, "runner refused input"));
      return;
    }
    this.queue.push(data);
    this.wake?.();
    if (!this.open) this.start();
  }

  /** Ends the stream (the terminal is gone). */
  close(): void {
    this.ended = true;
    this.wake?.();
  }

  private start(): void {
    this.open = true;
    this.runner.writeStream(this.messages()).catch((err: unknown) => {
      this.broken = true;
      if (!this.ended) this.log.debug({ terminal: this.id, err: ConnectError.from(err).message }, "input stream ended; writing call by call");
      // Whatever the stream had not taken yet still goes out, in order.
      for (const data of this.queue.splice(0)) this.write(data);
    });
  }

  private async *messages(): AsyncGenerator<{ id: string; data: Uint8Array }> {
    for (;;) {
      const data = this.queue.shift();
      if (data) {
        yield { id: this.id, data };
        continue;
      }
      if (this.ended || this.broken) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
