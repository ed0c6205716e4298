import type { Logger } from "../../lib/logger.js";
import type { Uri } from "../../ahp/types.js";
import type { Runner } from "../runners/runner-client.js";
import type { TerminalInfo as RunnerTerminalInfo } from "../../gen/terminal/v1/terminal_pb.js";
import { InputStream } from "./input-stream.js";

/** How a link's output is followed (TerminalFollow): started on demand, let go when nobody reads it. */
export interface OutputFollow {
  /** True while the output is followed. */
  readonly active: boolean;
  /** Starts following when not yet (`fresh`: the terminal was just spawned); resolves once its state is whole. */
  ensure(fresh?: boolean): Promise<void>;
  /** The number of the terminal's readers here changed. */
  readersChanged(readers: number): void;

}

/**
 * One terminal channel's tie to the process behind it: the runner and the terminal's id there,
 * its input stream, the queue that keeps its side effects (resize, clear, labels) in the order they
 * were accepted, and whether a client named it. Its AHP state lives in the state store.
 */
export class TerminalLink {
  private effects: Promise<void> = Promise.resolve();
  private namedByClient: boolean;
  /** Aborted when this gateway lets go of the terminal (disposed, closed in the runner, or the gateway is stopping). */
  readonly closed = new AbortController();
  /** The terminal's input, over one stream to the runner. */
  readonly input: InputStream;
  /** The runner offset the text committed so far ends at (whole characters): where a screen matching the state is rendered, and what output offsets report. */
  outputOffset = 0;
  /** The revision of the runner's record this gateway's state of the terminal reflects (conditional label writes expect it). */
  revision = 0n;
  /** Conditional label writes of this gateway in flight: the record's label changes wait for them (see OpenTerminals.writeLabels). */
  labelWrites = 0;
  /** True once the runner lost the terminal (it restarted): nothing more can be read of it, so it is never followed again. */
  gone = false;
  /** The runner record's labels as of `revision`. */
  labels: Record<string, string> = {};
  /** The latest record seen while label writes were in flight, applied once they settle. */
  deferred: RunnerTerminalInfo | undefined;
  /** Following the terminal's output while it is read here; set by the open terminals. */
  follow!: OutputFollow;

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
    this.closed.signal.addEventListener("abort", () => this.input.close(), { once: true });
  }

  /** Notes the runner record's revision and labels this gateway's state now reflects. */
  saw(info: RunnerTerminalInfo): void {
    if (info.revision > this.revision) this.revision = info.revision;
    this.labels = { ...info.labels };
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
