import { describe, expect, it } from "vitest";
import { Backoff } from "../../../lib/backoff.js";

/** A seeded generator of numbers in [0, 1) (mulberry32), so a run of draws is the same every time. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HIGHEST = (): number => 1 - Number.EPSILON;
const LOWEST = (): number => 0;

describe("Backoff", () => {
  it("starts at the shortest pause and stays there when every draw is the lowest", () => {
    const backoff = new Backoff({ minMs: 100, maxMs: 5_000, random: LOWEST });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([100, 100, 100]);
  });

  it("grows by up to three times the last pause, and never beyond the longest", () => {
    const backoff = new Backoff({ minMs: 100, maxMs: 5_000, random: HIGHEST });
    expect(Array.from({ length: 6 }, () => backoff.next())).toEqual([299, 896, 2_687, 4_999, 4_999, 4_999]);
  });

  it("starts again from the shortest pause after reset", () => {
    const backoff = new Backoff({ minMs: 250, maxMs: 5_000, random: HIGHEST });
    for (let i = 0; i < 5; i++) backoff.next();
    backoff.reset();
    expect(backoff.next()).toBe(749);
  });

  it("draws every pause within [minMs, min(maxMs, 3 × the last pause)], spread out rather than in step", () => {
    const backoff = new Backoff({ minMs: 500, maxMs: 10_000, random: seededRandom(25) });
    let previous = 500;
    const pauses: number[] = [];
    for (let i = 0; i < 1_000; i++) {
      if (i % 50 === 0) {
        backoff.reset();
        previous = 500;
      }
      const pause = backoff.next();
      expect(pause).toBeGreaterThanOrEqual(500);
      expect(pause).toBeLessThanOrEqual(Math.min(10_000, previous * 3));
      pauses.push(pause);
      previous = pause;
    }
    expect(new Set(pauses).size).toBeGreaterThan(500);
    expect(Math.max(...pauses)).toBeGreaterThan(9_000);
  });

  it("gives two callers that failed together different pauses", () => {
    const one = new Backoff({ minMs: 100, maxMs: 5_000, random: seededRandom(1) });
    const other = new Backoff({ minMs: 100, maxMs: 5_000, random: seededRandom(2) });
    expect(Array.from({ length: 4 }, () => one.next())).not.toEqual(Array.from({ length: 4 }, () => other.next()));
  });

  it("refuses bounds it cannot honour", () => {
    expect(() => new Backoff({ minMs: 0, maxMs: 100 })).toThrow(RangeError);
    expect(() => new Backoff({ minMs: 200, maxMs: 100 })).toThrow(/0 < minMs <= maxMs, got 200 and 100/);
    expect(() => new Backoff({ minMs: 1.5, maxMs: 100 })).toThrow(RangeError);
  });
});
