import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ActionEnvelope } from "../../../ahp/types.js";
import { notificationFrame } from "../../../ahp/json-rpc.js";
import { Outbox, SOFT_LIMIT_BYTES } from "../../../gateway/wire/outbox.js";

class Sink {
  readonly frames: any[] = [];
  bufferedAmount = 0;
  send(frame: string): void {
    this.frames.push(JSON.parse(frame));
  }
}

const data = (channel: string, serverSeq: number, text: string) => {
  const envelope = { channel, serverSeq, action: { type: "terminal/data" as const, data: text } };
  return [envelope, notificationFrame("action", envelope)] as const;
};

describe("Outbox", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("sends output at once while the socket keeps up", () => {
    const sink = new Sink();
    const outbox = new Outbox(sink, () => {});
    outbox.sendData(...data("a", 1, "x"), 0);
    expect(sink.frames).toHaveLength(1);
  });

  it("merges output per channel for a subscriber that asked for a latency, keeping the last serverSeq", () => {
    const sink = new Sink();
    const outbox = new Outbox(sink, () => {});
    outbox.sendData(...data("a", 1, "he"), 50);
    outbox.sendData(...data("b", 2, "other"), 50);
    outbox.sendData(...data("a", 3, "llo"), 50);
    expect(sink.frames).toHaveLength(0);
    vi.advanceTimersByTime(50);
    expect(sink.frames.map((frame) => frame.params)).toEqual([
      { channel: "a", serverSeq: 3, action: { type: "terminal/data", data: "hello" } },
      { channel: "b", serverSeq: 2, action: { type: "terminal/data", data: "other" } },
    ]);
  });

  it("batches output while the socket is congested, and flushes before any other frame", () => {
    const sink = new Sink();
    const outbox = new Outbox(sink, () => {});
    sink.bufferedAmount = 1024 * 1024;
    outbox.sendData(...data("a", 1, "1"), 0);
    outbox.sendData(...data("a", 2, "2"), 0);
    const exited: ActionEnvelope = { channel: "a", serverSeq: 3, action: { type: "terminal/exited", exitCode: 0 } };
    outbox.send(notificationFrame("action", exited));
    expect(sink.frames.map((frame) => frame.params.action)).toEqual([{ type: "terminal/data", data: "12" }, { type: "terminal/exited", exitCode: 0 }]);
  });

  it("drops what it holds for a channel the connection may no longer read, and says there is room", () => {
    const sink = new Sink();
    let rooms = 0;
    const outbox = new Outbox(sink, () => {}, () => rooms++);
    outbox.sendData(...data("a", 1, "secret"), 50);
    outbox.sendData(...data("b", 2, "kept"), 50);
    const before = outbox.buffered;
    outbox.drop("a");
    expect(outbox.buffered).toBe(before - "secret".length);
    expect(rooms).toBe(1);
    outbox.drop("nothing-held");
    expect(rooms).toBe(1);
    vi.advanceTimersByTime(50);
    expect(sink.frames.map((frame) => frame.params)).toEqual([{ channel: "b", serverSeq: 2, action: { type: "terminal/data", data: "kept" } }]);
  });

  it("reports a client that stays above its bound, and not one that catches up", () => {
    const overflows: number[] = [];
    const sink = new Sink();
    const outbox = new Outbox(sink, (buffered) => overflows.push(buffered));
    sink.bufferedAmount = SOFT_LIMIT_BYTES + 1;
    outbox.send("{}");
    vi.advanceTimersByTime(9_000);
    sink.bufferedAmount = 0;
    outbox.send("{}");
    vi.advanceTimersByTime(5_000);
    expect(overflows).toEqual([]);
    sink.bufferedAmount = SOFT_LIMIT_BYTES + 1;
    outbox.send("{}");
    vi.advanceTimersByTime(10_000);
    expect(overflows).toHaveLength(1);
  });

  it("reports a client past the hard bound at once", () => {
    const overflows: number[] = [];
    const sink = new Sink();
    const outbox = new Outbox(sink, (buffered) => overflows.push(buffered));
    sink.bufferedAmount = 65 * 1024 * 1024;
    outbox.send("{}");
    expect(overflows).toHaveLength(1);
  });
});
