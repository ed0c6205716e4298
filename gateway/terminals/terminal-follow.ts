import { ConnectError } from "@connectrpc/connect";
import type { TerminalAction, TerminalState } from "../../ahp/types.js";
import { TerminalState as RunnerTerminalState, type TerminalInfo as RunnerTerminalInfo } from "../../gen/terminal/v1/terminal_pb.js";
import type { Logger } from "../../lib/logger.js";
import type { ContentRebuild, StateStore } from "../state/store.js";
import type { TerminalSummary } from "../state/terminal-record.js";
import { followRunnerTerminal } from "../runners/runner-bridge.js";
import type { Rebuilds } from "./rebuilds.js";
import { stateFromRecord } from "./terminal-state-from-record.js";
import type { OutputFollow, TerminalLink } from "./terminal-link.js";

/**
 * How long a terminal is still followed after its last reader here left: a client that reconnects
 * (a dropped socket, a page reload) within it finds the terminal followed and its history whole,
 * instead of waiting for a rebuild; past it an unread terminal costs this gateway nothing per byte.
 */
export const FOLLOW_GRACE_MS = 15_000;
/**
 * How long a terminal just created here is followed before anyone reads it: its creator, when it
 * reads it, subscribes within a round trip; one that does not (a script starting jobs it reads
 * later, or never) leaves no per-byte cost for longer than this.
 */
export const FRESH_FOLLOW_GRACE_MS = 2_000;

/** What following needs: the store, the rebuild tracker, a logger, and where live actions go. */
export interface TerminalFollowOptions {
  store: StateStore;
  rebuilds: Rebuilds;
  log: Logger;
  /** Takes an action of the live output (after the rebuild), as committed state; output with the runner offset its text ends at. */
  live(action: TerminalAction, outputOffset?: number): void;
  graceMs?: number;
}

/**
 * Follows one runner terminal's output while someone reads it through this gateway. Following
 * starts on demand (`ensure`): the terminal's AHP state is rebuilt apart from the one clients see,
 * by replaying the runner's retained log from the start, and put in place once it holds everything
 * the runner had when following began; later output is live. When the last reader leaves, following
 * stops after FOLLOW_GRACE_MS and the content is dropped, so an unread terminal costs nothing per byte.
 */
export class TerminalFollow implements OutputFollow {
  private controller: AbortController | undefined;
  private rebuild: ContentRebuild | undefined;
  private caughtUp: Promise<void> = Promise.resolve();
  private grace: NodeJS.Timeout | undefined;
  /** The grace the next time nobody reads the terminal: shorter for one just created that nobody has read yet. */
  private nextGraceMs: number | undefined;

  constructor(
    private readonly link: TerminalLink,
    private readonly options: TerminalFollowOptions,
  ) {}

  /** True while the terminal's output is followed. */
  get active(): boolean {
    return this.controller !== undefined;
  }

  /**
   * Starts following when not yet; resolves once the state is rebuilt (or the rebuild wait gave up
   * on it). `fresh`: the terminal was just spawned, so there is nothing to rebuild and everything it
   * writes is live (its creator, who usually reads it next, sees its exit as an action).
   */
  ensure(fresh = false): Promise<void> {
    if (!this.controller && !this.link.closed.signal.aborted && !this.link.gone) {
      this.controller = new AbortController();
      if (fresh) this.nextGraceMs = Math.min(FRESH_FOLLOW_GRACE_MS, this.options.graceMs ?? FOLLOW_GRACE_MS);
      this.caughtUp = this.start(this.controller.signal, fresh);
      this.readersChanged(this.options.store.readers(this.link.uri));
    }
    return this.caughtUp;
  }

  /** The number of readers changed: the first one starts following, the last one leaving starts the grace period. */
  readersChanged(readers: number): void {
    if (readers > 0) {
      clearTimeout(this.grace);
      this.grace = undefined;
      this.nextGraceMs = undefined;
      void this.ensure();
      return;
    }
    if (!this.controller || this.grace) return;
    this.grace = setTimeout(() => this.stop(), this.nextGraceMs ?? this.options.graceMs ?? FOLLOW_GRACE_MS);
    this.grace.unref();
  }

  /** Stops following; `dropContent` when nobody reads it here any more (a terminal let go of keeps its state as it was). */
  stop(dropContent = true): void {
    clearTimeout(this.grace);
    this.grace = undefined;
    if (!this.controller) return;
    this.controller.abort();
    this.controller = undefined;
    this.rebuild = undefined;
    // A terminal its runner lost keeps what was read of it: there is nothing to rebuild it from.
    if (!dropContent || this.link.gone) return;
    this.options.store.clearContent(this.link.uri);
    this.options.log.debug({ uri: this.link.uri }, "nobody reads the terminal here: stopped following it");
  }

  private async start(signal: AbortSignal, fresh: boolean): Promise<void> {
    const { store, rebuilds, log } = this.options;
    const { link } = this;
    const closed = (): void => this.stop(false);
    link.closed.signal.addEventListener("abort", closed, { once: true });
    signal.addEventListener("abort", () => link.closed.signal.removeEventListener("abort", closed), { once: true });
    const done = rebuilds.track(link.uri, signal, () => this.finishRebuild());
    let info: RunnerTerminalInfo | undefined;
    try {
      if (!fresh) ({ terminal: info } = await link.runner.terminals.get({ id: link.runnerId }, { signal }));
    } catch (err) {
      if (signal.aborted) return done();
      log.warn({ uri: link.uri, err: ConnectError.from(err).message }, "cannot ask the runner how far the terminal's output goes; following it from here");
    }
    const summary = store.terminalSummary(link.uri);
    if (!summary || signal.aborted) return done();
    this.rebuild = store.rebuild(link.uri, startingState(summary, info));
    link.outputOffset = 0;
    const until = info ? { offset: Number(info.endOffset), exited: info.state !== RunnerTerminalState.RUNNING } : { offset: 0, exited: false };
    const caughtUp = new Promise<void>((resolve) => {
      void followRunnerTerminal(link.runner.follows, link.runnerId, (action, outputOffset) => this.take(action, outputOffset), {
        log,
        signal,
        waitForRoom: () => store.channels.waitForRoom(link.uri, signal),
        until,
        caughtUp: () => {
          this.finishRebuild();
          resolve();
        },
        reachedOffset: (offset) => {
          link.outputOffset = offset;
        },
      })
        .catch((err: unknown) => log.error({ err, uri: link.uri }, "following the terminal failed"))
        .finally(resolve);
    });
    await Promise.race([caughtUp, new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }))]);
    done();
  }

  private take(action: TerminalAction, outputOffset?: number): void {
    const rebuild = this.rebuild;
    if (!rebuild) return this.options.live(action, outputOffset);
    if (!isRepeat(rebuild.summary, action, this.link.titleSetByClient)) rebuild.apply(action);
  }

  private finishRebuild(): void {
    const rebuild = this.rebuild;
    if (!rebuild) return;
    this.rebuild = undefined;
    rebuild.finish(this.link.titleSetByClient);
  }
}

/**
 * True for what the runner reports that changes nothing, or must not change it: the current size,
 * title or cwd again, and a program's title over one a client set.
 */
export function isRepeat(state: TerminalSummary, action: TerminalAction, titleSetByClient: boolean): boolean {
  if (action.type === "terminal/resized") return action.cols === state.cols && action.rows === state.rows;
  if (action.type === "terminal/titleChanged") return titleSetByClient || action.title === state.title;
  if (action.type === "terminal/cwdChanged") return action.cwd === state.cwd;
  return false;
}

/**
 * Where a rebuild starts: the terminal as the runner's record describes it now (or as this gateway
 * last knew it, when the runner could not be asked), its content empty, not yet exited (the replay ends
 * with its exit). The claim and a client's title are the record's own and stay when it is put in place.
 */
function startingState(summary: TerminalSummary, info: RunnerTerminalInfo | undefined): TerminalState {
  if (info) return stateFromRecord(info);
  const start: TerminalState = { ...summary, content: [], lifecycle: { status: "running" } };
  delete start.exitCode;
  return start;
}
