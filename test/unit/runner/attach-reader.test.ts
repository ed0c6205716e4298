import { describe, expect, it } from "vitest";
import { outputBytes } from "../../../services/runner/log/output-log.js";
import { AttachReader, type AttachEvent, type AttachStep } from "../../../services/runner/terminal/attach-stream.js";
import { fakeTerminal as setup } from "./fake-launcher.js";

const textOf = (events: readonly AttachEvent[]): string => events.map(({ event }) => (event.kind === "output" ? outputBytes(event).toString() : `<${event.kind}>`)).join("");
const settled = async (promise: Promise<void>): Promise<boolean> => Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);

describe("AttachReader", () => {
  it("steps through what the log holds, then says to wait, and the step's promise settles at the next output", async () => {
    const { terminal, process } = setup();
    process.emit("one ");
    process.emit("two ");
    const reader = new AttachReader(terminal, { fromOffset: 0, follow: true, stripShellMarks: false });
    const first = reader.step();
    expect([textOf(first.events), first.next]).toEqual(["one two ", "more"]);
    const caughtUp = reader.step();
    expect([caughtUp.events, caughtUp.next]).toEqual([[], "wait"]);
    expect(await settled(caughtUp.changed)).toBe(false);
    process.emit("three");
    expect(await settled(caughtUp.changed)).toBe(true);
    const next = reader.step();
    expect([textOf(next.events), next.next, next.events[0]!.offset]).toEqual(["three", "more", 8]);
    reader.close();
  });

  it("is done once caught up when not following, exactly at until_offset, and after the exit", () => {
    const { terminal, process } = setup();
    process.emit("abcdef");
    const replay = new AttachReader(terminal, { fromOffset: 2, follow: false, stripShellMarks: false });
    expect(textOf(replay.step().events)).toBe("cdef");
    expect(replay.step().next).toBe("done");
    const range = new AttachReader(terminal, { fromOffset: 1, untilOffset: 4, follow: true, stripShellMarks: false });
    expect(textOf(range.step().events)).toBe("bcd");
    expect(range.step()).toMatchObject({ events: [], next: "done" });
    const live = new AttachReader(terminal, { fromOffset: 6, follow: true, stripShellMarks: false });
    process.exit({ exitCode: 3, signal: "" });
    const last: AttachStep = live.step();
    expect([textOf(last.events), last.next]).toEqual(["<exited>", "done"]);
    for (const reader of [replay, range, live]) reader.close();
  });

  it("reports a gap first when retention moved past where it reads, and refuses a range that ends before it starts", () => {
    const { terminal, process } = setup(8);
    const reader = new AttachReader(terminal, { fromOffset: 0, follow: true, stripShellMarks: false });
    process.emit("0123456789abcdef");
    const step = reader.step();
    expect(step.events[0]).toEqual({ offset: 0, event: { kind: "gap", from: 0, to: 8 } });
    expect(textOf(step.events.slice(1))).toBe("89abcdef");
    reader.close();
    expect(() => new AttachReader(terminal, { fromOffset: 5, untilOffset: 4, follow: true, stripShellMarks: false })).toThrow(/until_offset 4 is before from_offset 5/);
  });

  it("holds the process's output back while it has not stepped past what it was given", () => {
    const { terminal, process } = setup(1 << 22);
    const reader = new AttachReader(terminal, { fromOffset: 0, follow: true, stripShellMarks: false });
    // More than flow control lets a reader fall behind: the output is no longer read until the reader steps again.
    process.emit(Buffer.alloc(512 * 1024, 0x61));
    expect(reader.step().next).toBe("more");
    expect(process.paused).toBe(true);
    reader.step();
    expect(process.paused).toBe(false);
    reader.close();
  });
});
