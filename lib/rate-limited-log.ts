import type { Logger } from "./logger.js";

/** The shortest time between two lines of one kind: a flood of refusals costs one line every ten seconds. */
export const LOG_INTERVAL_MS = 10_000;

/**
 * Warnings a peer can trigger at will (refused connections, tokens, requests) or that repeat many
 * times a second (descriptors exhausted): written at once, then at most once per kind every
 * `intervalMs`, each line saying how many of its kind were left out since the last (`leftOut`).
 */
export class RateLimitedLog {
  private readonly kinds = new Map<string, { at: number; skipped: number }>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs = LOG_INTERVAL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Logs `message` at warn unless a line of this `kind` went out within the interval. */
  warn(kind: string, fields: Record<string, unknown>, message: string): void {
    const now = this.now();
    const last = this.kinds.get(kind);
    if (last && now - last.at < this.intervalMs) {
      last.skipped++;
      return;
    }
    this.log.warn(last?.skipped ? { ...fields, leftOut: last.skipped } : fields, message);
    this.kinds.set(kind, { at: now, skipped: 0 });
  }

  /** A warning of one kind (its message is its kind), as a function of the fields of each occurrence. */
  warning(message: string): (fields?: Record<string, unknown>) => void {
    return (fields = {}) => this.warn(message, fields, message);
  }
}
