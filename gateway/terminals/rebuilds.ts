import type { Uri } from "../../ahp/types.js";
import type { Logger } from "../../lib/logger.js";

/**
 * The longest a request waits for adopted terminals' state to be rebuilt from the runner's
 * retained log (a megabyte of output replays in well under a second): a runner that hangs
 * mid-replay holds a request this long, once; later requests no longer wait for that terminal and
 * see it as far as it got, the rest following as ordinary output.
 */
export const REBUILD_WAIT_MS = 10_000;

/**
 * Adopted terminals whose state is still being rebuilt from the runner's retained log, so requests
 * that show their state are answered once it is whole, never with an empty snapshot of a terminal
 * that has content.
 */
export class Rebuilds {
  private readonly pending = new Map<Uri, Promise<void>>();
  private readonly late = new WeakMap<Promise<void>, () => void>();

  constructor(
    private readonly log: Logger,
    private readonly waitMs = REBUILD_WAIT_MS,
  ) {}

  /**
   * Starts tracking a terminal's rebuild; call the result once it is done (an abort of `signal`
   * counts as done). `late` is called when a wait gives up on it, so it is served as far as it got.
   */
  track(uri: Uri, signal: AbortSignal, late?: () => void): () => void {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.pending.set(uri, done);
    if (late) this.late.set(done, late);
    signal.addEventListener("abort", finish, { once: true });
    void done.then(() => {
      if (this.pending.get(uri) === done) this.pending.delete(uri);
      signal.removeEventListener("abort", finish);
    });
    return finish;
  }

  /**
   * Resolves once the terminals among `uris` (every one when undefined) are rebuilt, or after
   * `waitMs` (REBUILD_WAIT_MS); those still rebuilding then are no longer waited for.
   */
  async wait(uris?: Iterable<Uri>): Promise<void> {
    const waiting = uris === undefined ? [...this.pending] : [...uris].flatMap((uri) => (this.pending.has(uri) ? [[uri, this.pending.get(uri)!] as const] : []));
    if (waiting.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      Promise.all(waiting.map(([, done]) => done)).then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.waitMs))),
    ]);
    clearTimeout(timer);
    if (!late) return;
    for (const [uri, done] of waiting) {
      if (this.pending.get(uri) !== done) continue;
      this.pending.delete(uri);
      this.log.warn({ uri, waitedMs: this.waitMs }, "the runner has not replayed this terminal's output yet; serving it as far as it got");
      this.late.get(done)?.();
    }
  }
}
