import { describe, expect, it } from "vitest";
import { ChangeJournal } from "../../../services/runner/terminal/change-journal.js";
import type { TerminalSnapshot } from "../../../services/runner/terminal/terminal.js";

function record(id: string, labels: Record<string, string> = {}): TerminalSnapshot {
  return {
    id, pid: 1, isPty: true, title: "t", cwd: "/", cols: 80, rows: 24, labels, startOffset: 0, endOffset: 0,
    createdAt: new Date(0), argv: ["sh"], commandDetection: false, runAs: "", revision: 1, closed: false,
  };
}

describe("the change journal", () => {
  it("numbers changes one after another from 1 and hands out those after a sequence", () => {
    const journal = new ChangeJournal();
    expect(journal.sequence).toBe(0);
    journal.append("spawned", record("a"));
    journal.append("labels", record("a", { k: "v" }), {});
    journal.append("closed", record("a"));
    expect(journal.sequence).toBe(3);
    expect(journal.since(0)!.map((entry) => [entry.sequence, entry.change])).toEqual([[1, "spawned"], [2, "labels"], [3, "closed"]]);
    expect(journal.since(2)!.map((entry) => entry.sequence)).toEqual([3]);
    expect(journal.since(3)).toEqual([]);
  });

  it("refuses a sequence it has not reached, or one that is no whole number", () => {
    const journal = new ChangeJournal();
    journal.append("spawned", record("a"));
    expect(journal.since(2)).toBeUndefined();
    expect(journal.since(-1)).toBeUndefined();
    expect(journal.since(0.5)).toBeUndefined();
  });

  it("keeps at most its number of changes, and says so for a sequence whose successors it dropped", () => {
    const journal = new ChangeJournal({ journalChanges: 3, journalBytes: 1 << 20, maxLagChanges: 1 });
    for (let i = 0; i < 5; i++) journal.append("spawned", record(`t${i}`));
    expect(journal.since(2)!.map((entry) => entry.sequence)).toEqual([3, 4, 5]);
    expect(journal.since(1)).toBeUndefined();
  });

  it("keeps at most its bytes of records, counting label values, but always the newest change", () => {
    const journal = new ChangeJournal({ journalChanges: 100, journalBytes: 10_000, maxLagChanges: 1 });
    const big = { k: "x".repeat(4_000) };
    for (let i = 0; i < 4; i++) journal.append("labels", record("a", big));
    expect(journal.since(1)).toBeUndefined();
    expect(journal.since(2)!.map((entry) => entry.sequence)).toEqual([3, 4]);
    journal.append("labels", record("a", { k: "y".repeat(20_000) }));
    expect(journal.since(4)!.map((entry) => entry.sequence)).toEqual([5]);
  });

  it("wakes waiters at the next change, and sets a new epoch for every journal", async () => {
    const journal = new ChangeJournal();
    const woken = journal.nextChange();
    journal.append("spawned", record("a"));
    await expect(woken).resolves.toBeUndefined();
    expect(new ChangeJournal().epoch).not.toBe(journal.epoch);
  });
});
