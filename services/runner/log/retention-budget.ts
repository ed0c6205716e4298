/** What the budget needs of a log it counts (an output log): how much it holds, and a way to make it give up its oldest bytes. */
export interface BudgetedLog {
  readonly retainedBytes: number;
  /** Evicts up to `bytes` from the front; returns what was freed. */
  evictOldest(bytes: number): number;
}

/**
 * The runner-wide cap on retained output. When the sum over all terminals goes past it, the
 * terminal holding the most gives up its oldest bytes first, so one flood cannot evict the
 * history of every quiet terminal.
 */
export class RetentionBudget {
  private total = 0;
  private readonly logs = new Set<BudgetedLog>();

  constructor(readonly limitBytes: number) {}

  /** Bytes retained by all registered logs. */
  get usedBytes(): number {
    return this.total;
  }

  /** Starts counting a log. */
  register(log: BudgetedLog): void {
    this.logs.add(log);
  }

  /** Stops counting a log (its bytes must have been released first). */
  unregister(log: BudgetedLog): void {
    this.logs.delete(log);
  }

  /** Counts bytes a log now holds, evicting from the largest logs while the total is over the limit. */
  charge(log: BudgetedLog, bytes: number): void {
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

  private largest(): BudgetedLog | undefined {
    let best: BudgetedLog | undefined;
    for (const log of this.logs) if (!best || log.retainedBytes > best.retainedBytes) best = log;
    return best;
  }
}
