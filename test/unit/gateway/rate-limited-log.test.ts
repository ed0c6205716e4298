import { describe, expect, it } from "vitest";
import { RateLimitedLog } from "../../../gateway/wire/rate-limited-log.js";
import { capturedLog } from "../../support/captured-log.js";

describe("RateLimitedLog", () => {
  it("writes one line per kind per interval, and says in the next how many it left out", () => {
    const { log, lines } = capturedLog();
    let now = 0;
    const warnings = new RateLimitedLog(log, 10_000, () => now);
    for (let i = 0; i < 5; i++) warnings.warn("a", { i }, "kind a");
    warnings.warn("b", {}, "kind b");
    now = 10_000;
    warnings.warn("a", { i: 5 }, "kind a");
    expect(lines.map(({ msg, i, leftOut }) => ({ msg, i, leftOut }))).toEqual([
      { msg: "kind a", i: 0, leftOut: undefined },
      { msg: "kind b", i: undefined, leftOut: undefined },
      { msg: "kind a", i: 5, leftOut: 4 },
    ]);
    expect(lines.every((line) => line.level === 40)).toBe(true);
  });
});
