import { describe, expect, it } from "vitest";
import { RateLimitedLog } from "../../../lib/rate-limited-log.js";
import { capturedLog } from "../../support/captured-log.js";

describe("RateLimitedLog", () => {
  it("writes one line per kind per interval, and says in the next how many it left out", () => {
    const { log, lines } = capturedLog();
    let now = 0;
    const warnings = new RateLimitedLog(log, 10_000, () => now);
    for (let i = 0; i < 5; i++) warnings.warn("a", { i }, "kind a");
    warnings.warn("b", {}, "kind b");
    now = 9_999;
    warnings.warn("a", { i: 5 }, "kind a");
    now = 10_000;
    warnings.warn("a", { i: 6 }, "kind a");
    expect(lines.map(({ msg, i, leftOut }) => ({ msg, i, leftOut }))).toEqual([
      { msg: "kind a", i: 0, leftOut: undefined },
      { msg: "kind b", i: undefined, leftOut: undefined },
      { msg: "kind a", i: 6, leftOut: 5 },
    ]);
    expect(lines.every((line) => line.level === 40)).toBe(true);
  });

  it("gives one kind as a function of its fields", () => {
    const { log, lines } = capturedLog();
    let now = 0;
    const warn = new RateLimitedLog(log, 50, () => now).warning("connections refused");
    warn({ address: "10.0.0.1" });
    warn({ address: "10.0.0.2" });
    now = 50;
    warn();
    expect(lines).toMatchObject([
      { level: 40, msg: "connections refused", address: "10.0.0.1" },
      { level: 40, msg: "connections refused", leftOut: 1 },
    ]);
  });
});
