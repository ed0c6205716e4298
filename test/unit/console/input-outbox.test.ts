import { describe, expect, it } from "vitest";
import { InputOutbox, MAX_WAITING_INPUT_CHARS } from "../../../console/input-outbox.js";

describe("the console's outbox of keys typed while disconnected", () => {
  it("keeps input in order, per terminal, and hands it over once", () => {
    const outbox = new InputOutbox();
    outbox.add("a", "ec");
    outbox.add("a", "ho\r");
    outbox.add("b", "x");
    outbox.add("a", "y");
    expect(outbox.waitingCount).toBe(7);
    expect(outbox.drain()).toEqual([
      { channel: "a", data: "echo\r" },
      { channel: "b", data: "x" },
      { channel: "a", data: "y" },
    ]);
    expect(outbox.drain()).toEqual([]);
    expect(outbox.waitingCount).toBe(0);
  });

  it("refuses what passes its bound and everything after it, so what is sent has no holes", () => {
    const outbox = new InputOutbox(10);
    expect(outbox.add("a", "12345678")).toBe(true);
    expect(outbox.add("a", "abc")).toBe(false);
    // Small enough to fit, but typed after something refused.
    expect(outbox.add("a", "d")).toBe(false);
    expect(outbox.waitingCount).toBe(8);
    expect(outbox.droppedCount).toBe(4);
    expect(outbox.drain()).toEqual([{ channel: "a", data: "12345678" }]);
    expect(outbox.droppedCount).toBe(0);
    expect(outbox.add("a", "again")).toBe(true);
  });

  it("holds a few thousand characters by default", () => {
    const outbox = new InputOutbox();
    expect(outbox.add("a", "x".repeat(MAX_WAITING_INPUT_CHARS))).toBe(true);
    expect(outbox.add("a", "x")).toBe(false);
  });

  it("remembers input sent until an echo of it, or of anything dispatched after it, comes back", () => {
    const outbox = new InputOutbox();
    outbox.sent({ channel: "a", data: "ls", clientSeq: 3 });
    outbox.sent({ channel: "a", data: "\r", clientSeq: 5 });
    outbox.sent({ channel: "b", data: "x", clientSeq: 6 });
    outbox.confirm(4);
    expect(outbox.takeUnconfirmed()).toEqual([
      { channel: "a", data: "\r", clientSeq: 5 },
      { channel: "b", data: "x", clientSeq: 6 },
    ]);
    expect(outbox.takeUnconfirmed()).toEqual([]);
  });

  it("forgets the oldest unechoed input past its bound", () => {
    const outbox = new InputOutbox(4);
    outbox.sent({ channel: "a", data: "ab", clientSeq: 1 });
    outbox.sent({ channel: "a", data: "cd", clientSeq: 2 });
    outbox.sent({ channel: "a", data: "e", clientSeq: 3 });
    expect(outbox.takeUnconfirmed().map(({ clientSeq }) => clientSeq)).toEqual([2, 3]);
  });
});
