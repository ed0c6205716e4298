import type { Logger } from "./logger.js";

/** How often one kind of warning may be logged: once a minute tells an operator, a flood of them tells nothing more. */
export const WARNING_INTERVAL_MS = 60_000;

/**
 * A warning for a condition that can repeat many times a second (descriptors exhausted, connections
 * refused): logged at once, then at most once per `intervalMs`, each time with how many were held
 * back since the last one (`suppressed`).
 */
export function createRateLimitedWarning(log: Logger, message: string, intervalMs = WARNING_INTERVAL_MS): (fields?: Record<string, unknown>) => void {
  let lastAt = -Infinity;
  let suppressed = 0;
  return (fields = {}) => {
    const now = performance.now();
    if (now - lastAt < intervalMs) {
      suppressed++;
      return;
    }
    log.warn({ ...fields, ...(suppressed > 0 ? { suppressed } : {}) }, message);
    lastAt = now;
    suppressed = 0;
  };
}
