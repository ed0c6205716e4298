import type { OutputLog } from "./output-log.js";

/**
 * The runner-wide cap on retained output. When the sum over all terminals goes past it, the
 * terminal holding the most gives up its oldest bytes first, so one flood cannot evict the
 * history of every quiet terminal.
 */
export class RetentionBudget {
  private total = 0;
  private readonly logs = new Set<OutputLog>();

  constructor(readonly limitBytes: number) {}

  /** Bytes retained by all registered logs. */
  get usedBytes(): number {
    return this.total;
  }

  /** Starts counting a log. */
  register(log: OutputLog): void {
    this.logs.add(log);
  }

  /** Stops counting a log (its bytes must have been released first). */
  unregister(log: OutputLog): void {
    this.logs.delete(log);
  }

  /** Counts bytes a log now holds, evicting from the largest logs while the total is over the limit. */
  charge(log: OutputLog, bytes: number): void {
    this.total += bytes;
    while (this.total > this.limitBytes) {
      const largest = this.largest() ?? log;
      const freed = largest.evictOldest(this.total - this.limitBytes);
      this.total -= freed;
      if (freed === 0) break;
    }
  }

  /** Forgets bytes a log let go of by itself. */
  release(bytes: number): void {
    this.total -= bytes;
  }

  private largest(): OutputLog | undefined {
    let best: OutputLog | undefined;
    for (const log of this.logs) if (!best || log.retainedBytes > best.retainedBytes) best = log;
    return best;
  }
}
