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
});
