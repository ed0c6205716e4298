import { RunnerError } from "../runner-error.js";

/** How many spawns may be in progress, and how many more may wait for one to finish. */
export interface SpawnLimits {
  maxConcurrent: number;
  maxQueued: number;
}

/**
 * Lets at most `maxConcurrent` spawns run at once and up to `maxQueued` more wait, first come first
 * served; past that a spawn is RESOURCE_EXHAUSTED at once. Starting a process is synchronous work
 * (account lookups, fork and exec) that holds the event loop: a slot is given back only after the
 * loop has had a turn, so a burst of spawns is spread out and every other call (keystrokes, output,
 * health checks) is served between them. A waiting spawn whose caller gives up (a deadline, a
 * cancel) leaves the queue with the caller's reason.
 */
export class SpawnGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limits: SpawnLimits) {}

  /** Runs `spawn` once a slot is free; the slot is held until what it returns has settled. */
  async run<T>(spawn: () => T | Promise<T>, signal: AbortSignal): Promise<T> {
    await this.enter(signal);
    try {
      return await spawn();
    } finally {
      setImmediate(() => this.leave());
    }
  }

  /** Spawns in progress and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private enter(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.running < this.limits.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.maxQueued) {
      const { maxConcurrent, maxQueued } = this.limits;
      throw new RunnerError(
        "resource_exhausted",
        `the runner is already starting ${maxConcurrent} terminals with ${maxQueued} more waiting (its --max-concurrent-spawns and --max-queued-spawns); try again shortly`,
      );
    }
    return new Promise((resolve, reject) => {
      const admit = (): void => {
        signal.removeEventListener("abort", giveUp);
        resolve();
      };
      const giveUp = (): void => {
        this.waiting.splice(this.waiting.indexOf(admit), 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", giveUp, { once: true });
      this.waiting.push(admit);
    });
  }

  private leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
