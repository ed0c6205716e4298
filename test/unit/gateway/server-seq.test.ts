import { describe, expect, it } from "vitest";
import { ActionLog } from "../../../gateway/state/action-log.js";
import { ClientRegistry } from "../../../gateway/state/client-registry.js";
import { SERVER_SEQ_PER_MS, serverSeqBaseAt } from "../../../gateway/state/server-seq-base.js";

describe("serverSeq across gateway restarts", () => {
  it("starts each gateway above what an earlier one could issue in the time between, in safe integers", () => {
    const started = Date.UTC(2026, 9, 2);
    const first = new ActionLog(serverSeqBaseAt(started));
    // The earlier gateway ran 10 s and issued 9 million envelopes, far above any flood measured.
    for (let i = 0; i < 1000; i++) first.append("a", { type: "terminal/cleared" });
    const lastIssued = first.serverSeq + 9_000_000 - 1000;
    const second = new ActionLog(serverSeqBaseAt(started + 10_000));
    expect(second.serverSeq).toBeGreaterThan(lastIssued);
    expect(Number.isSafeInteger(serverSeqBaseAt(Date.UTC(2250, 0, 1)))).toBe(true);
    expect(() => serverSeqBaseAt(Date.UTC(2300, 0, 1))).toThrow(RangeError);
    expect(SERVER_SEQ_PER_MS).toBe(1000);
  });

  it("replays only from positions it issued: never below its base or past its latest", () => {
    const log = new ActionLog(5_000);
    expect(log.serverSeq).toBe(5_000);
    expect(log.append("a", { type: "terminal/data", data: "x" }).serverSeq).toBe(5_001);
    expect(log.since(5_000, new Set(["a"]))).toHaveLength(1);
    expect(log.since(4_999, new Set(["a"]))).toBeUndefined();
    expect(log.since(106, new Set(["a"]))).toBeUndefined();
    expect(log.since(5_002, new Set(["a"]))).toBeUndefined();
    expect(log.issued(5_000) && log.issued(5_001) && !log.issued(4_999) && !log.issued(5_002)).toBe(true);
  });

  it("knows what it could have sent each client, over its live and closed connections", () => {
    const registry = new ClientRegistry();
    const first = { highestSent: 120 };
    registry.remember("c", "1.1.0", first, true);
    expect(registry.couldHaveSeen("c", 120)).toBe(true);
    expect(registry.couldHaveSeen("c", 121)).toBe(false);
    registry.detach("c", first);
    const second = { highestSent: 0 };
    registry.remember("c", "1.1.0", second, false);
    expect(registry.couldHaveSeen("c", 120)).toBe(true);
    second.highestSent = 300;
    expect(registry.couldHaveSeen("c", 300)).toBe(true);
    expect(registry.couldHaveSeen("someone-else", 1)).toBe(false);
  });

  it("keeps a client's windows for reconnect, and forgets them on a fresh initialize", () => {
    const registry = new ClientRegistry();
    const limits = { windowBytes: 1, maximumFrameBytes: 2, maximumMessageBytes: 3 };
    registry.remember("c", "1.1.0", { highestSent: 0 }, true);
    registry.rememberWindow("c", "ahp-terminal:/t", { clientReceive: limits, hostReceive: limits });
    registry.remember("c", "1.1.0", { highestSent: 0 }, false);
    expect(registry.windowOf("c", "ahp-terminal:/t")).toBeDefined();
    registry.remember("c", "1.1.0", { highestSent: 0 }, true);
    expect(registry.windowOf("c", "ahp-terminal:/t")).toBeUndefined();
  });
});
