import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRateLimitedWarning } from "../../../lib/rate-limited-warning.js";

describe("createRateLimitedWarning", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("logs the first warning at once, holds back repeats for the interval, then says how many it held back", () => {
    // The interval is measured on performance.now(): the test moves that clock instead of waiting.
    vi.useFakeTimers({ toFake: ["performance"] });
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: "warn" }, new Writable({ write: (chunk, _, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    const warn = createRateLimitedWarning(log, "connections refused", 50);
    warn({ remote: "10.0.0.1" });
    warn({ remote: "10.0.0.2" });
    warn({ remote: "10.0.0.3" });
    expect(lines).toMatchObject([{ level: 40, msg: "connections refused", remote: "10.0.0.1" }]);
    vi.advanceTimersByTime(49);
    warn({ remote: "10.0.0.4" });
    expect(lines).toHaveLength(1);
    vi.advanceTimersByTime(1);
    warn({ remote: "10.0.0.5" });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ remote: "10.0.0.5", suppressed: 3 });
  });
});
