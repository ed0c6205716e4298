import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { OutputLog, outputBytes, outputLength, type ReadEvent } from "../../../services/runner/log/output-log.js";
import { RetentionBudget } from "../../../services/runner/log/retention-budget.js";

setFlagsFromString("--expose-gc");
/** A full collection, so a weak reference to something nothing else holds is cleared. */
const collectGarbage = runInNewContext("gc") as () => void;

const text = (value: string): Buffer => Buffer.from(value);
const kinds = (events: readonly ReadEvent[]): string[] => events.map(({ event }) => event.kind);
const outputOf = (events: readonly ReadEvent[]): string =>
  events.map(({ event }) => (event.kind === "output" ? outputBytes(event).toString() : "")).join("");

describe("OutputLog", () => {
  it("gives every output byte a monotonically increasing offset", () => {
    const log = new OutputLog(1024);
    expect(log.appendOutput(text("abc"))).toBe(0);
    expect(log.appendOutput(text("de"))).toBe(3);
    expect(log.endOffset).toBe(5);
    const read = log.read(log.cursorAt(0), 1024);
    expect(read.events).toEqual([{ offset: 0, event: { kind: "output", parts: [text("abc"), text("de")], end: 5 } }]);
    expect(outputOf(read.events)).toBe("abcde");
  });

  it("merges consecutive appends into one read without copying them: its parts are the buffers appended, cut where the read starts", () => {
    const log = new OutputLog(1024);
    const first = text("hello ");
    const second = text("world");
    log.appendOutput(first);
    log.appendOutput(second);
    const [whole] = log.read(log.cursorAt(0), 1024).events;
    expect(whole!.event.kind === "output" && whole!.event.parts[0]).toBe(first);
    expect(whole!.event.kind === "output" && whole!.event.parts[1]).toBe(second);
    const [inside] = log.read(log.cursorAt(2), 1024).events;
    if (inside?.event.kind !== "output") throw new Error("expected output");
    expect(inside.event.parts.map((part) => part.toString())).toEqual(["llo ", "world"]);
    // A view of the appended buffer, not a copy of it.
    expect(inside.event.parts[0]!.buffer).toBe(first.buffer);
    expect(outputLength(inside.event)).toBe(9);
  });

  it("stamps non-output events with the offset where they happened, in order", () => {
    const log = new OutputLog(1024);
    log.appendOutput(text("ab"));
    log.record({ kind: "resized", cols: 100, rows: 30 });
    log.appendOutput(text("cd"));
    log.record({ kind: "title_changed", title: "t" });
    const { events } = log.read(log.cursorAt(0), 1024);
    expect(events.map(({ offset, event }) => [offset, event.kind])).toEqual([
      [0, "output"],
      [2, "resized"],
      [2, "output"],
      [4, "title_changed"],
    ]);
  });

  it("reads from an offset inside a chunk, including events recorded exactly there", () => {
    const log = new OutputLog(1024);
    log.appendOutput(text("hello"));
    log.record({ kind: "cleared" });
    log.appendOutput(text("world"));
    expect(outputOf(log.read(log.cursorAt(2), 1024).events)).toBe("lloworld");
    const atFive = log.read(log.cursorAt(5), 1024).events;
    expect(kinds(atFive)).toEqual(["cleared", "output"]);
    expect(atFive[1]!.offset).toBe(5);
  });

  it("continues from the cursor a read returned, without repeating or skipping", () => {
    const log = new OutputLog(1024);
    log.appendOutput(text("one"));
    const first = log.read(log.cursorAt(0), 1024);
    log.appendOutput(text("two"));
    log.record({ kind: "resized", cols: 1, rows: 1 });
    const second = log.read(first.cursor, 1024);
    expect(outputOf(second.events)).toBe("two");
    expect(kinds(second.events)).toEqual(["output", "resized"]);
    expect(log.read(second.cursor, 1024).events).toEqual([]);
    expect(log.isCaughtUp(second.cursor)).toBe(true);
  });

  it("stops a read exactly at an offset inside a chunk, and goes on from there without repeating or skipping", () => {
    const log = new OutputLog(1024);
    log.appendOutput(text("abcdefghij"));
    log.record({ kind: "resized", cols: 1, rows: 1 });
    const head = log.read(log.cursorAt(2), 1024, false, 6);
    expect(head.events).toEqual([{ offset: 2, event: { kind: "output", parts: [text("cdef")], end: 6 } }]);
    expect(head.cursor.offset).toBe(6);
    const rest = log.read(head.cursor, 1024);
    expect(outputOf(rest.events)).toBe("ghij");
    expect(kinds(rest.events)).toEqual(["output", "resized"]);
    expect(log.read(log.cursorAt(4), 1024, false, 4).events).toEqual([]);
    // An event stamped at the stopping offset comes after the output before it: it is not read.
    expect(kinds(log.read(log.cursorAt(0), 1024, false, 10).events)).toEqual(["output"]);
  });

  it("bounds retention in bytes and reports what a late reader missed as a gap", () => {
    const log = new OutputLog(10);
    log.appendOutput(text("0123456789"));
    log.appendOutput(text("abcdef"));
    expect(log.startOffset).toBe(6);
    expect(log.retainedBytes).toBe(10);
    const read = log.read(log.cursorAt(0), 1024);
    expect(read.gap).toEqual({ from: 0, to: 6 });
    expect(read.events[0]!.offset).toBe(6);
    expect(outputOf(read.events)).toBe("6789abcdef");
  });

  it("lets go of evicted output at once, long before its dead slots are compacted away", async () => {
    const log = new OutputLog(64 * 1024);
    // The memory itself (eviction may keep a view of part of it for a while), and no local holding it.
    const first = ((chunk: Buffer) => (log.appendOutput(chunk), new WeakRef(chunk.buffer)))(Buffer.alloc(4096, 0x61));
    log.record({ kind: "title_changed", title: "t" });
    // Twenty more chunks push the first one and the title out, far fewer than the slots a compaction waits for.
    for (let i = 0; i < 20; i++) log.appendOutput(Buffer.alloc(4096, 0x62));
    expect(log.startOffset).toBeGreaterThan(4096);
    expect(outputOf(log.read(log.cursorAt(log.startOffset), 1 << 20).events)).toBe("b".repeat(log.endOffset - log.startOffset));
    // The weak reference holds its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(first.deref()).toBeUndefined();
    // The log itself is still in use (a log nothing holds would take its slots with it).
    expect(log.endOffset).toBe(21 * 4096);
  });

  it("gives a gap to a reader whose cursor was overtaken by eviction", () => {
    const log = new OutputLog(4);
    log.appendOutput(text("ab"));
    const cursor = log.read(log.cursorAt(0), 1024).cursor;
    log.appendOutput(text("cdefgh"));
    const read = log.read(cursor, 1024);
    expect(read.gap).toEqual({ from: 2, to: 4 });
    expect(outputOf(read.events)).toBe("efgh");
  });

  it("caps how much output one read merges", () => {
    const log = new OutputLog(1024);
    for (let i = 0; i < 10; i++) log.appendOutput(text("0123456789"));
    const first = log.read(log.cursorAt(0), 25);
    expect(outputOf(first.events)).toBe("0123456789".repeat(3));
    expect(outputOf(log.read(first.cursor, 1024).events)).toHaveLength(70);
  });

  it("keeps a multi-byte character split across two chunks intact when the chunks are joined", () => {
    const log = new OutputLog(1024);
    const euro = text("€");
    log.appendOutput(euro.subarray(0, 1));
    log.appendOutput(euro.subarray(1));
    const [output] = log.read(log.cursorAt(0), 1024).events;
    expect(output!.event.kind === "output" && outputBytes(output!.event).toString("utf8")).toBe("€");
  });

  it("clears retained output: later readers get a gap and the cleared event", () => {
    const log = new OutputLog(1024);
    log.appendOutput(text("secret"));
    log.clear();
    log.appendOutput(text("after"));
    const read = log.read(log.cursorAt(0), 1024);
    expect(read.gap).toEqual({ from: 0, to: 6 });
    expect(kinds(read.events)).toEqual(["cleared", "output"]);
    expect(outputOf(read.events)).toBe("after");
  });

  it("accepts nothing after the final event", () => {
    const log = new OutputLog(1024);
    log.finish({ kind: "exited", exitCode: 0, signal: "" });
    log.appendOutput(text("late"));
    expect(log.isFinished).toBe(true);
    expect(kinds(log.read(log.cursorAt(0), 1024).events)).toEqual(["exited"]);
  });

  it("refuses a cursor past the end", () => {
    const log = new OutputLog(1024);
    log.appendOutput(text("ab"));
    expect(() => log.cursorAt(3)).toThrow(/past the end/);
    expect(() => log.cursorAt(-1)).toThrow(/past the end/);
  });

  it("counts events against retention so an event storm stays bounded", () => {
    const log = new OutputLog(1024);
    for (let i = 0; i < 10_000; i++) log.record({ kind: "resized", cols: 1 + (i % 2), rows: 1 });
    expect(log.retainedBytes).toBeLessThanOrEqual(1024);
    expect(log.read(log.cursorAt(0), 1024).events.length).toBeLessThanOrEqual(16);
  });

  it("wakes waiters on the next change", async () => {
    const log = new OutputLog(1024);
    const changed = log.nextChange();
    log.appendOutput(text("x"));
    await expect(changed).resolves.toBeUndefined();
  });
});

describe("RetentionBudget", () => {
  it("evicts from the largest log first when the total is over the limit", () => {
    const budget = new RetentionBudget(100);
    const quiet = new OutputLog(1000, budget);
    const busy = new OutputLog(1000, budget);
    quiet.appendOutput(Buffer.alloc(30));
    busy.appendOutput(Buffer.alloc(60));
    busy.appendOutput(Buffer.alloc(60));
    expect(budget.usedBytes).toBeLessThanOrEqual(100);
    expect(quiet.retainedBytes).toBe(30);
    expect(busy.startOffset).toBe(50);
  });

  it("forgets a disposed log's bytes", () => {
    const budget = new RetentionBudget(100);
    const log = new OutputLog(1000, budget);
    log.appendOutput(Buffer.alloc(40));
    log.dispose();
    expect(budget.usedBytes).toBe(0);
  });

  it("stays exact when a log evicts by its own limit", () => {
    const budget = new RetentionBudget(1000);
    const log = new OutputLog(50, budget);
    for (let i = 0; i < 20; i++) log.appendOutput(Buffer.alloc(7));
    expect(budget.usedBytes).toBe(log.retainedBytes);
    expect(log.retainedBytes).toBe(50);
  });
});

describe("OutputLog after exit", () => {
  it("keeps the exit record last when cleared, and never evicts it", () => {
    const log = new OutputLog(100);
    log.appendOutput(Buffer.alloc(150));
    log.finish({ kind: "exited", exitCode: 1, signal: "" });
    expect(kinds(log.read(log.cursorAt(0), 1000).events)).toEqual(["output", "exited"]);
    log.clear();
    expect(log.isFinished).toBe(true);
    expect(kinds(log.read(log.cursorAt(0), 1000).events)).toEqual(["cleared", "exited"]);
  });
});

describe("OutputLog's cost of events", () => {
  it("counts an event's text against retention, so a flood of long titles cannot grow the log past its limit", () => {
    const log = new OutputLog(64 * 1024);
    for (let i = 0; i < 1000; i++) log.record({ kind: "title_changed", title: `${i}`.padEnd(4096, "t") });
    expect(log.retainedBytes).toBeLessThanOrEqual(64 * 1024);
    // What is retained is bounded by the titles' size, not by a flat cost per event.
    const { events } = log.read(log.cursorAt(0), Number.MAX_SAFE_INTEGER);
    expect(events.length).toBeLessThanOrEqual(16);
    expect(events.reduce((sum, { event }) => sum + (event.kind === "title_changed" ? event.title.length : 0), 0)).toBeLessThanOrEqual(64 * 1024);
  });
});

describe("OutputLog under many small chunks", () => {
  it("keeps every byte, offset and event order across many small chunks merged by reads", () => {
    const log = new OutputLog(1024 * 1024);
    let expected = "";
    for (let i = 0; i < 5000; i++) {
      const chunk = `${i}:`.padEnd(1 + (i % 97), "x");
      expect(log.appendOutput(text(chunk))).toBe(expected.length);
      expected += chunk;
      if (i % 1000 === 999) log.record({ kind: "resized", cols: i, rows: 1 });
    }
    let cursor = log.cursorAt(0);
    let seen = "";
    const resizedAt: number[] = [];
    for (;;) {
      const read = log.read(cursor, 64 * 1024);
      if (read.events.length === 0) break;
      for (const { offset, event } of read.events) {
        if (event.kind === "output") {
          expect(offset).toBe(seen.length);
          seen += outputBytes(event).toString();
        } else resizedAt.push(offset);
      }
      cursor = read.cursor;
    }
    expect(seen).toBe(expected);
    expect(resizedAt).toHaveLength(5);
  });

  it("does not change what a reader already holds when later chunks arrive", () => {
    const log = new OutputLog(1024);
    log.appendOutput(text("abc"));
    const first = log.read(log.cursorAt(0), 1024);
    log.appendOutput(text("def"));
    const second = log.read(first.cursor, 1024);
    expect(outputOf(first.events)).toBe("abc");
    expect(outputOf(second.events)).toBe("def");
  });

  it("evicts from inside a chunk exactly, leaving later bytes and offsets intact", () => {
    const log = new OutputLog(10);
    for (const chunk of ["0123", "4567", "89ab", "cdef"]) log.appendOutput(text(chunk));
    expect(log.startOffset).toBe(6);
    expect(outputOf(log.read(log.cursorAt(6), 1024).events)).toBe("6789abcdef");
  });
});
