import type { Logger } from "../../lib/logger.js";
import type { Uri } from "../../ahp/types.js";
import type { Runner } from "../runners/runner-client.js";
import { InputStream } from "./input-stream.js";

/**
 * One terminal channel's tie to the process behind it: the runner and the terminal's id there,
 * its input stream, the queue that keeps its side effects (resize, clear, labels) in the order they
 * were accepted, and whether a client named it. Its AHP state lives in the state store.
 */
export class TerminalLink {
  private effects: Promise<void> = Promise.resolve();
  private namedByClient: boolean;
  /** Aborted when the gateway stops following the runner terminal (disposed, or the gateway is stopping). */
  readonly follow = new AbortController();
  /** The terminal's input, over one stream to the runner. */
  readonly input: InputStream;
  /** The runner offset the text committed so far ends at (whole characters): where a screen matching the state is rendered, and what output offsets report. */
  outputOffset = 0;

  constructor(
    readonly uri: Uri,
    /** The runner the process lives in, and its id there. */
    readonly runner: Runner,
    readonly runnerId: string,
    namedByClient: boolean,
    log: Logger,
  ) {
    this.namedByClient = namedByClient;
    this.input = new InputStream(runner.terminals, runnerId, log);
    this.follow.signal.addEventListener("abort", () => this.input.close(), { once: true });
  }

  /** True once a client named the terminal: titles the program sets no longer replace it. */
  get titleSetByClient(): boolean {
    return this.namedByClient;
  }

  /** Records that a client named the terminal. */
  keepClientTitle(): void {
    this.namedByClient = true;
  }

  /** Runs `effect` after every effect queued before it; a failure is handed to `onError` and does not stop the queue. */
  queue(effect: () => Promise<unknown>, onError: (err: unknown) => void): Promise<void> {
    this.effects = this.effects.then(effect).then(
      () => undefined,
      (err: unknown) => onError(err),
    );
    return this.effects;
  }
}
