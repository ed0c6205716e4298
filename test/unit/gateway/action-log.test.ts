import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it, vi } from "vitest";
import { ActionLog } from "../../../gateway/state/action-log.js";
import { outputOffsetOf } from "../../../gateway/state/output-offset.js";
import { TextRing } from "../../../gateway/state/text-ring.js";
import type { ActionEnvelope, StateAction } from "../../../ahp/types.js";

setFlagsFromString("--expose-gc");
/** A full collection, so a weak reference to something nothing else holds is cleared. */
const collectGarbage = runInNewContext("gc") as () => void;

describe("ActionLog", () => {
  it("stamps a strictly increasing serverSeq", () => {
    const log = new ActionLog();
    expect(log.serverSeq).toBe(0);
    const seqs = [1, 2, 3].map(() => log.append("c", { type: "terminal/cleared" }).serverSeq);
    expect(seqs).toEqual([1, 2, 3]);
    expect(log.serverSeq).toBe(3);
  });

  it("replays what came after lastSeen, only on the channels asked for", () => {
    const log = new ActionLog();
    log.append("a", { type: "terminal/data", data: "1" });
    log.append("b", { type: "terminal/data", data: "2" });
    log.append("a", { type: "terminal/data", data: "3" });
    expect(log.since(1, new Set(["a"]))!.map((envelope) => envelope.serverSeq)).toEqual([3]);
    expect(log.since(0, new Set(["a", "b"]))!.map((envelope) => envelope.serverSeq)).toEqual([1, 2, 3]);
    expect(log.since(3, new Set(["a"]))).toEqual([]);
  });

  it("lets go of what it no longer keeps at once", async () => {
    const log = new ActionLog();
    const dropped = new WeakRef<StateAction>({ type: "terminal/data", data: "x".repeat(3 * 1024 * 1024) });
    log.append("a", dropped.deref()!);
    const kept = { type: "terminal/data" as const, data: "y".repeat(3 * 1024 * 1024) };
    log.append("a", kept);
    expect(log.since(1, new Set(["a"]))!.map((envelope) => envelope.action)).toEqual([kept]);
    // The weak reference holds its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(dropped.deref()).toBeUndefined();
  });

  it("replays text exactly as it came, envelopes in the shape they were sent, across many laps of its text buffer", () => {
    const log = new ActionLog();
    const kinds = ["out\r\n", "héllo ", "日本語", "😀", "\ud800", "\x1b[0m"];
    const sent: ActionEnvelope[] = [];
    for (let i = 0; i < 8000; i++) {
      const data = `${i}:${kinds[i % kinds.length]!.repeat(1 + (i % 700))}`;
      const action: StateAction = i % 3 === 0 ? { type: "terminal/input", data } : { type: "terminal/data", data };
      sent.push(log.append(i % 2 ? "a" : "b", action, i % 5 === 0 ? { clientId: "c1", clientSeq: i } : undefined));
    }
    const laps = sent.reduce((chars, envelope) => chars + ("data" in envelope.action ? envelope.action.data.length : 0), 0) / (4 * 1024 * 1024);
    expect(laps).toBeGreaterThan(2);
    const replayed = log.since(7900, new Set(["a", "b"]))!;
    expect(replayed.map((envelope) => JSON.stringify(envelope))).toEqual(sent.slice(7900).map((envelope) => JSON.stringify(envelope)));
  });

  it("replays output with the runner offset it was marked with", () => {
    const log = new ActionLog();
    const sent = log.append("a", { type: "terminal/data", data: "hello" }, undefined, 1234);
    log.append("a", { type: "terminal/data", data: "unmarked" });
    expect(outputOffsetOf(sent)).toBe(1234);
    expect(log.since(0, new Set(["a"]))!.map(outputOffsetOf)).toEqual([1234, undefined]);
  });

  it("does not replay an envelope whose text was written over, though the character budget would have kept it", () => {
    const log = new ActionLog();
    const mebi = 1024 * 1024;
    log.append("a", { type: "terminal/data", data: "x".repeat(1.5 * mebi) });
    log.append("a", { type: "terminal/data", data: "y".repeat(1.5 * mebi) });
    // 2 Mi characters do not fit after the first 3 Mi: they start a new lap, over both.
    const last = "z".repeat(2 * mebi);
    log.append("a", { type: "terminal/data", data: last });
    expect(log.since(1, new Set(["a"]))).toBeUndefined();
    expect(log.since(2, new Set(["a"]))!.map((envelope) => envelope.action)).toEqual([{ type: "terminal/data", data: last }]);
  });

  it("holds none of the envelopes it hands out, nor the text in them", async () => {
    const log = new ActionLog();
    const action = new WeakRef<StateAction>({ type: "terminal/data", data: "x".repeat(1024 * 1024) });
    const envelope = new WeakRef(log.append("a", action.deref()!));
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect([action.deref(), envelope.deref()]).toEqual([undefined, undefined]);
    expect(log.since(0, new Set(["a"]))!.map((kept) => kept.action)).toEqual([{ type: "terminal/data", data: "x".repeat(1024 * 1024) }]);
  });

  it("says it cannot replay from before what it kept, or from a sequence it never reached", () => {
    const log = new ActionLog();
    const big = "x".repeat(1024 * 1024);
    for (let i = 0; i < 6; i++) log.append("a", { type: "terminal/data", data: big });
    expect(log.since(0, new Set(["a"]))).toBeUndefined();
    expect(log.since(log.serverSeq - 1, new Set(["a"]))).toHaveLength(1);
    expect(log.since(log.serverSeq + 5, new Set(["a"]))).toBeUndefined();
    expect(log.since(-1, new Set(["a"]))).toBeUndefined();
  });

  it("tells whether it would replay, as since() would, without reading any text out", () => {
    const log = new ActionLog();
    const read = vi.spyOn(TextRing.prototype, "read");
    const big = "x".repeat(1024 * 1024);
    for (let i = 0; i < 6; i++) log.append(i % 2 ? "a" : "b", { type: "terminal/data", data: big });
    log.restart("b");
    const asked: Array<[number, string[]]> = [[0, ["a"]], [log.serverSeq - 3, ["a"]], [log.serverSeq - 3, ["a", "b"]], [log.serverSeq, ["b"]], [log.serverSeq + 1, ["a"]]];
    const answers = asked.map(([seq, channels]) => log.reaches(seq, new Set(channels)));
    expect(read).not.toHaveBeenCalled();
    expect(answers).toEqual(asked.map(([seq, channels]) => log.since(seq, new Set(channels)) !== undefined));
    expect(answers).toEqual([false, true, false, true, false]);
    read.mockRestore();
  });

  it("keeps a bounded number of envelopes", () => {
    const log = new ActionLog();
    for (let i = 0; i < 20_000; i++) log.append("a", { type: "terminal/cleared" });
    expect(log.since(0, new Set(["a"]))).toBeUndefined();
    expect(log.since(19_000, new Set(["a"]))).toHaveLength(1000);
  });
});
