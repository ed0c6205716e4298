/**
 * Each pause is drawn between the shortest one and this many times the pause before it ("decorrelated
 * jitter"): on average a pause is about one and a half times the last, and callers that failed together
 * (every terminal of a runner that restarted, every tab of a gateway) spread out instead of retrying in step.
 */
const SPREAD_FACTOR = 3;

/** The shortest and the longest pause between attempts in whole ms, and the source of randomness (tests pass their own). */
export interface BackoffOptions {
  minMs: number;
  maxMs: number;
  /** A number in [0, 1), as Math.random returns. */
  random?: () => number;
}

/**
 * Pauses between attempts to reach something that failed: growing from `minMs` towards `maxMs` with
 * random jitter, and back to `minMs` after `reset()` (once an attempt succeeded). Pure: no timers, so
 * the browser console, the gateway and the launcher each wait in their own way.
 */
export class Backoff {
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;
  private previousMs: number;

  constructor({ minMs, maxMs, random = Math.random }: BackoffOptions) {
    if (!Number.isInteger(minMs) || !Number.isInteger(maxMs) || minMs <= 0 || maxMs < minMs) {
      throw new RangeError(`a backoff needs whole milliseconds with 0 < minMs <= maxMs, got ${minMs} and ${maxMs}`);
    }
    this.minMs = minMs;
    this.maxMs = maxMs;
    this.random = random;
    this.previousMs = minMs;
  }

  /** The pause before the next attempt, in ms: at least `minMs`, below three times the last one, at most `maxMs`. */
  next(): number {
    const ceilingMs = Math.min(this.maxMs, this.previousMs * SPREAD_FACTOR);
    this.previousMs = Math.floor(this.minMs + this.random() * (ceilingMs - this.minMs));
    return this.previousMs;
  }

  /** Starts again from the shortest pause (the last attempt succeeded). */
  reset(): void {
    this.previousMs = this.minMs;
  }
}
