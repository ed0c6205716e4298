import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createRateLimitedWarning } from "../../../lib/rate-limited-warning.js";

describe("createRateLimitedWarning", () => {
  it("logs the first warning at once, holds back repeats for the interval, then says how many it held back", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: "warn" }, new Writable({ write: (chunk, _, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    const warn = createRateLimitedWarning(log, "connections refused", 50);
    warn({ remote: "10.0.0.1" });
    warn({ remote: "10.0.0.2" });
    warn({ remote: "10.0.0.3" });
    expect(lines).toMatchObject([{ level: 40, msg: "connections refused", remote: "10.0.0.1" }]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    warn({ remote: "10.0.0.4" });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ remote: "10.0.0.4", suppressed: 2 });
  });
});
