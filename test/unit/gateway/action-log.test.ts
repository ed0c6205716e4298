import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { ActionLog } from "../../../gateway/state/action-log.js";
import type { StateAction } from "../../../ahp/types.js";

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

  it("says it cannot replay from before what it kept, or from a sequence it never reached", () => {
    const log = new ActionLog();
    const big = "x".repeat(1024 * 1024);
    for (let i = 0; i < 6; i++) log.append("a", { type: "terminal/data", data: big });
    expect(log.since(0, new Set(["a"]))).toBeUndefined();
    expect(log.since(log.serverSeq - 1, new Set(["a"]))).toHaveLength(1);
    expect(log.since(log.serverSeq + 5, new Set(["a"]))).toBeUndefined();
    expect(log.since(-1, new Set(["a"]))).toBeUndefined();
  });

  it("keeps a bounded number of envelopes", () => {
    const log = new ActionLog();
    for (let i = 0; i < 20_000; i++) log.append("a", { type: "terminal/cleared" });
    expect(log.since(0, new Set(["a"]))).toBeUndefined();
    expect(log.since(19_000, new Set(["a"]))).toHaveLength(1000);
  });
});
