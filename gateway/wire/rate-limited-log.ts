import type { Logger } from "../../lib/logger.js";

/** The shortest time between two lines of one kind: a flood of refusals costs one line every ten seconds. */
const LOG_INTERVAL_MS = 10_000;

/**
 * Warnings that a client can trigger at will (refused connections, refused hosts), written at most
 * once per kind every ten seconds; a line says how many of its kind were left out since the last.
 */
export class RateLimitedLog {
  private readonly kinds = new Map<string, { at: number; skipped: number }>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs = LOG_INTERVAL_MS,
    private readonly now: () => number = Date.now,
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
}
