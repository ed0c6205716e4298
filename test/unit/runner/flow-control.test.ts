import { describe, expect, it } from "vitest";
import { FlowControl, READ_CREDIT_BYTES, STALLED_READER_MS, UNREAD_HEADROOM_BYTES } from "../../../services/runner/terminal/flow-control.js";

function setup(retainLimit = 1_000_000) {
  const level = { endOffset: 0, retainedBytes: 0, retainLimit };
  let time = 0;
  let changes = 0;
  const flow = new FlowControl(() => level, () => changes++, () => time);
  return { level, flow, advance: (ms: number) => (time += ms), changes: () => changes };
}

describe("FlowControl", () => {
  it("with nobody reading, reads while the log has room to spare, so reads under way evict nothing", () => {
    const big = setup(4 * UNREAD_HEADROOM_BYTES);
    big.level.retainedBytes = 3 * UNREAD_HEADROOM_BYTES - 1;
    expect(big.flow.shouldRead()).toBe(true);
    big.level.retainedBytes = 3 * UNREAD_HEADROOM_BYTES;
    expect(big.flow.shouldRead()).toBe(false);
    // A small log keeps half of itself free.
    const small = setup(1000);
    small.level.retainedBytes = 499;
    expect(small.flow.shouldRead()).toBe(true);
    small.level.retainedBytes = 500;
    expect(small.flow.shouldRead()).toBe(false);
  });

  it("reads while the fastest reader is within the credit, and again once it catches up", () => {
    const { level, flow } = setup();
    const reader = flow.open(0);
    level.endOffset = READ_CREDIT_BYTES - 1;
    expect(flow.shouldRead()).toBe(true);
    level.endOffset = READ_CREDIT_BYTES;
    expect(flow.shouldRead()).toBe(false);
    reader.progress(READ_CREDIT_BYTES);
    expect(flow.shouldRead()).toBe(true);
    flow.dispose();
  });

  it("follows the fastest of several readers; a slow one holds nobody up", () => {
    const { level, flow } = setup();
    flow.open(0);
    const fast = flow.open(0);
    level.endOffset = 10 * READ_CREDIT_BYTES;
    fast.progress(level.endOffset - 10);
    expect(flow.shouldRead()).toBe(true);
  });

  it("stops waiting for a reader that stalled, and reads on (it will get a gap)", () => {
    const { level, flow, advance } = setup(1000);
    flow.open(0);
    level.endOffset = 2 * READ_CREDIT_BYTES;
    level.retainedBytes = 1000;
    expect(flow.shouldRead()).toBe(false);
    advance(STALLED_READER_MS);
    expect(flow.shouldRead()).toBe(true);
    flow.dispose();
  });

  it("tells the terminal to look again when a reader comes, goes or moves, and when a paused reader may have stalled", async () => {
    const { level, flow, changes } = setup();
    const reader = flow.open(0);
    reader.progress(5);
    reader.close();
    expect(changes()).toBe(3);
    flow.open(0);
    level.endOffset = 2 * READ_CREDIT_BYTES;
    flow.shouldRead();
    flow.dispose();
  });
});
