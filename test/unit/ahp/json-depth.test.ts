import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../../ahp/json-depth.js";

describe("nestsDeeperThan", () => {
  it("counts arrays and objects, up to the bound and one past it", () => {
    const nested = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[1,{"c":2}]}}', 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[1,{"c":2}]}}', 4)).toBe(false);
    // Siblings do not add up: depth goes down again when a level closes.
    expect(nestsDeeperThan("[[],[],[],[]]", 2)).toBe(false);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(nestsDeeperThan(JSON.stringify({ text: "[".repeat(1000) }))).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ text: 'a\\"[[[[' + '\\\\"' }), 1)).toBe(false);
    expect(nestsDeeperThan(`["\\\\", [[]]]`, 2)).toBe(true);
    expect(nestsDeeperThan(`["\\"", [[]]]`, 3)).toBe(false);
  });

  it("stops at the first level too deep, and leaves malformed text to the parser", () => {
    const bomb = "[".repeat(5_000_000);
    const started = performance.now();
    expect(nestsDeeperThan(bomb)).toBe(true);
    expect(performance.now() - started).toBeLessThan(50);
    expect(nestsDeeperThan('["unterminated')).toBe(false);
  });
});
