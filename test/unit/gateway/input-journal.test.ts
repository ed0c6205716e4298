import { describe, expect, it } from "vitest";
import { InputJournal } from "../../../gateway/terminals/input-journal.js";

const envelope = (clientSeq: number, data: string) => ({ channel: "t", serverSeq: 40 + clientSeq, action: { type: "terminal/input" as const, data }, origin: { clientId: "c", clientSeq } });

describe("the input journal", () => {
  it("recognises a retry from a later connection of the same client, and nothing else", () => {
    let now = 0;
    const journal = new InputJournal(() => now);
    const [first, second] = [{}, {}];
    journal.record(first, "c", envelope(1, "ls\r"), "ls\r");
    journal.record(first, "c", envelope(2, "x".repeat(10_000)), "x".repeat(10_000));
    expect(journal.retried(second, "c", "t", 1, "ls\r")?.serverSeq).toBe(41);
    expect(journal.retried(second, "c", "t", 2, "x".repeat(10_000))?.serverSeq).toBe(42);
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
