import { describe, expect, it } from "vitest";
import { InputJournal } from "../../../gateway/terminals/input-journal.js";

describe("the input journal", () => {
  it("recognises a retry from a later connection of the same client, and nothing else", () => {
    let now = 0;
    const journal = new InputJournal(() => now);
    const [first, second] = [{}, {}];
    journal.record(first, "c", "t", 1, 41, "ls\r");
    journal.record(first, "c", "t", 2, 42, "x".repeat(10_000));
    expect(journal.retried(second, "c", "t", 1, "ls\r")).toBe(41);
    expect(journal.retried(second, "c", "t", 2, "x".repeat(10_000))).toBe(42);
    expect(journal.retried(second, "c", "t", 2, "y".repeat(10_000))).toBeUndefined();
    // The same keystroke again on the same socket is a new keystroke; other data, channel, seq or client are not retries.
    expect(journal.retried(first, "c", "t", 1, "ls\r")).toBeUndefined();
    expect(journal.retried(second, "c", "t", 1, "ls -l\r")).toBeUndefined();
    expect(journal.retried(second, "c", "other", 1, "ls\r")).toBeUndefined();
    expect(journal.retried(second, "c", "t", 3, "ls\r")).toBeUndefined();
    expect(journal.retried(second, "d", "t", 1, "ls\r")).toBeUndefined();
    now += 121_000;
    expect(journal.retried(second, "c", "t", 1, "ls\r")).toBeUndefined();
  });
});
