import { describe, expect, it } from "vitest";
import type { TerminalState } from "../../../ahp/types.js";
import { ENDED_BUDGET_CHARS, ENDED_RETENTION_MS, EndedTerminals } from "../../../gateway/state/ended-terminals.js";

const state = (text: string): TerminalState => ({
  title: "sh",
  claim: { kind: "client", clientId: "c" },
  exitCode: 2,
  lifecycle: { status: "exited", exitCode: 2 },
  content: [
    { type: "unclassified", value: `before ${text}` },
    { type: "command", commandId: "cmd-1", commandLine: "ls", output: "out\r\n", timestamp: 5, isComplete: true, exitCode: 0, durationMs: 3 },
    { type: "unclassified", value: "after" },
  ],
});

describe("released terminals", () => {
  it("are rebuilt exactly as they were released", () => {
    const ended = new EndedTerminals();
    ended.keep("t", state("x"));
    expect(ended.get("t")).toEqual(state("x"));
    ended.forget("t");
    expect(ended.get("t")).toBeUndefined();
  });

  it("are kept for a bounded time", () => {
    let now = 1_000;
    const ended = new EndedTerminals(() => now);
    ended.keep("old", state("a"));
    now += ENDED_RETENTION_MS / 2;
    ended.keep("new", state("b"));
    now += ENDED_RETENTION_MS / 2 + 1;
    expect(ended.get("old")).toBeUndefined();
    expect(ended.get("new")).toBeDefined();
  });

  it("are kept within a bounded total, the oldest forgotten first", () => {
    const ended = new EndedTerminals();
    const big = "z".repeat(ENDED_BUDGET_CHARS / 4);
    for (const uri of ["1", "2", "3", "4"]) ended.keep(uri, state(big));
    // Four of them are just over the budget.
    expect(ended.get("1")).toBeUndefined();
    expect(["2", "3", "4"].every((uri) => ended.get(uri) !== undefined)).toBe(true);
    ended.keep("huge", state("h".repeat(ENDED_BUDGET_CHARS + 1)));
    expect(ended.get("huge")).toBeUndefined();
  });
});
