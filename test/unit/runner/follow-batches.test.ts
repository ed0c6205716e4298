import { describe, expect, it } from "vitest";
import { FollowBatches, type BatchScheduler } from "../../../services/runner/terminal/follow-batches.js";

/** A clock and timers that move only when the test says: `turn()` runs what waits for the next turn, `advance()` moves time. */
class SteppedScheduler implements BatchScheduler {
  time = 1_000;
  private timers: Array<{ at: number; task: () => void }> = [];
  private immediates: Array<() => void> = [];

  now = (): number => this.time;

  after = (ms: number, task: () => void): (() => void) => {
    const timer = { at: this.time + ms, task };
    this.timers.push(timer);
    return () => (this.timers = this.timers.filter((other) => other !== timer));
  };

  soon = (task: () => void): (() => void) => {
    this.immediates.push(task);
    return () => (this.immediates = this.immediates.filter((other) => other !== task));
  };

  turn(): void {
    const due = this.immediates;
    this.immediates = [];
    for (const task of due) task();
  }

  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((timer) => timer.at <= this.time);
    this.timers = this.timers.filter((timer) => timer.at > this.time);
    for (const { task } of due) task();
  }
}

/** Lets every promise that can settle, settle. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const HEARTBEAT_MS = 10_000;
const MAX_BATCH_BYTES = 1_000;
const MAX_PENDING_PER_OWNER = 100;
/** Items of this size or more are bulk output, paced; smaller ones (an echo) go on the next turn. */
const SMALL_BATCH_BYTES = 5;
/** A follow with this much not yet taken is flooding: its batch is not paced. */
const FLOOD_BYTES = 50;

/** Batches on a stepped clock, and a reader that takes the next batch only when asked to. */
function setup() {
  const scheduler = new SteppedScheduler();
  const batches = new FollowBatches<string, string>({
    heartbeatMs: HEARTBEAT_MS,
    scheduler,
    intervalMs: 2,
    maxBatchBytes: MAX_BATCH_BYTES,
    maxPendingPerOwner: MAX_PENDING_PER_OWNER,
    smallBatchBytes: SMALL_BATCH_BYTES,
    floodBytes: FLOOD_BYTES,
  });
  const controller = new AbortController();
  const iterator = batches.batches(controller.signal);
  const received: Array<string[] | "done"> = [];
  let failure: unknown;
  /** Asks for the next batch (as connect does once it took the last one). */
  const takeNext = (): void => {
    void iterator.next().then(
      (next) => void received.push(next.done ? "done" : next.value),
      (err: unknown) => void (failure = err),
    );
  };
  /** `ms` later, adds an item and lets the event loop turn: what was due by then has been handed out. */
  const addAfter = async (ms: number, owner: string, item: string, bytes: number): Promise<void> => {
    scheduler.advance(ms);
    batches.add(owner, item, bytes);
    scheduler.turn();
    await settle();
  };
  /** One batch ["a1"] sent and taken at time 0, so what comes within the interval after it is paced. */
  const afterASend = async (): Promise<void> => {
    takeNext();
    await addAfter(0, "a", "a1", 10);
    takeNext();
  };
  return { scheduler, batches, controller, received, takeNext, addAfter, afterASend, failure: () => failure };
}

describe("the batches of a Follow stream", () => {
  it("sends the first item after a quiet moment on the next turn of the event loop, with whatever that turn added", async () => {
    const { scheduler, batches, received, takeNext } = setup();
    takeNext();
    batches.add("a", "a1", 10);
    batches.add("b", "b1", 10);
    await settle();
    expect(received).toEqual([]);
    scheduler.turn();
    await settle();
    expect(received).toEqual([["a1", "b1"]]);
  });

  it("holds items that come within the interval after a send until the interval's end, then sends them together", async () => {
    const { scheduler, batches, received, takeNext, afterASend } = setup();
    await afterASend();
    scheduler.advance(0.5);
    batches.add("a", "a2", 10);
    scheduler.turn();
    scheduler.advance(1.4);
    batches.add("b", "b1", 10);
    await settle();
    expect(received).toEqual([["a1"]]);
    scheduler.advance(0.1);
    await settle();
    expect(received).toEqual([["a1"], ["a2", "b1"]]);
    // Quiet for longer than the interval: the next item goes on the next turn again.
    takeNext();
    scheduler.advance(5);
    batches.add("a", "a3", 10);
    scheduler.turn();
    await settle();
    expect(received.at(-1)).toEqual(["a3"]);
  });

  it("sends a small batch (an echo while typing fast) on the next turn even within the interval", async () => {
    const { scheduler, received, takeNext, addAfter, afterASend } = setup();
    await afterASend();
    await addAfter(0.5, "a", "echo", SMALL_BATCH_BYTES - 1);
    expect(received).toEqual([["a1"], ["echo"]]);
    // Bulk output within the interval after it is held again.
    takeNext();
    await addAfter(0.5, "a", "bulk", SMALL_BATCH_BYTES);
    expect(received).toEqual([["a1"], ["echo"]]);
    scheduler.advance(2);
    await settle();
    expect(received.at(-1)).toEqual(["bulk"]);
  });

  it("sends a flooding follow's batch on the next turn even within the interval, with what others added", async () => {
    const { scheduler, batches, received, takeNext, addAfter, afterASend } = setup();
    await afterASend();
    scheduler.advance(0.5);
    batches.add("busy", "b1", 10);
    batches.add("flood", "f1", FLOOD_BYTES / 2);
    scheduler.turn();
    await settle();
    expect(received).toEqual([["a1"]]);
    batches.add("flood", "f2", FLOOD_BYTES / 2);
    scheduler.turn();
    await settle();
    expect(received).toEqual([["a1"], ["b1", "f1", "f2"]]);
    // The flood's tail (less than the flood's size) is not held within the interval after it either.
    takeNext();
    await addAfter(1, "flood", "tail", SMALL_BATCH_BYTES);
    expect(received.at(-1)).toEqual(["tail"]);
    // Once it has not flooded for an interval, it is paced like any other.
    takeNext();
    await addAfter(2.5, "flood", "quiet", SMALL_BATCH_BYTES);
    expect(received.at(-1)).toEqual(["quiet"]);
    takeNext();
    await addAfter(0.5, "flood", "later", SMALL_BATCH_BYTES);
    expect(received.at(-1)).toEqual(["quiet"]);
    scheduler.advance(1.5);
    await settle();
    expect(received.at(-1)).toEqual(["later"]);
  });

  it("sends a batch at once when it reaches its size, and keeps what comes after for the next", async () => {
    const { scheduler, batches, received, takeNext, afterASend } = setup();
    await afterASend();
    for (let i = 0; i < 10; i++) batches.add(`o${i}`, `o${i}`, MAX_BATCH_BYTES / 10);
    batches.add("a", "after", 10);
    await settle();
    expect(received).toEqual([["a1"], Array.from({ length: 10 }, (_, i) => `o${i}`)]);
    takeNext();
    scheduler.advance(2);
    await settle();
    expect(received.at(-1)).toEqual(["after"]);
  });

  it("makes an owner at its cap wait until its batch was taken, and sends that batch on the next turn", async () => {
    const { scheduler, batches, received, takeNext, controller } = setup();
    takeNext();
    batches.add("quiet", "q1", 10);
    scheduler.turn();
    await settle();
    // Within the interval: only a waiting owner makes the batch go before its end.
    batches.add("flood", "f1", MAX_PENDING_PER_OWNER);
    expect(batches.hasRoom("flood")).toBe(false);
    expect(batches.hasRoom("quiet")).toBe(true);
    let roomy = false;
    void batches.room("flood", controller.signal).then(() => (roomy = true));
    await settle();
    scheduler.turn();
    await settle();
    expect(received).toEqual([["q1"]]);
    // Taken only once the reader comes back for more: it was handed out, not yet taken.
    takeNext();
    await settle();
    expect(received).toEqual([["q1"], ["f1"]]);
    expect(roomy).toBe(false);
    takeNext();
    await settle();
    expect(roomy).toBe(true);
    expect(batches.hasRoom("flood")).toBe(true);
  });

  it("sends an empty batch as a heartbeat after the heartbeat interval without one", async () => {
    const { scheduler, received, takeNext } = setup();
    takeNext();
    scheduler.advance(HEARTBEAT_MS - 1);
    await settle();
    expect(received).toEqual([]);
    scheduler.advance(1);
    await settle();
    expect(received).toEqual([[]]);
  });

  it("leaves out a dropped owner's items not yet handed out, and sends nothing for a batch that only held those", async () => {
    const { scheduler, batches, received, takeNext } = setup();
    takeNext();
    batches.add("a", "a1", 10);
    batches.add("gone", "g1", 10);
    batches.add("a", "a2", 10);
    batches.drop("gone");
    scheduler.turn();
    await settle();
    expect(received).toEqual([["a1", "a2"]]);
    takeNext();
    batches.add("gone", "g2", 10);
    batches.drop("gone");
    scheduler.advance(HEARTBEAT_MS - 1);
    await settle();
    expect(received).toHaveLength(1);
  });

  it("sends what it holds at once when ended, then ends", async () => {
    const { batches, received, takeNext } = setup();
    takeNext();
    batches.add("a", "a1", 10);
    batches.end();
    await settle();
    takeNext();
    await settle();
    expect(received).toEqual([["a1"], "done"]);
  });

  it("fails the batches with the error given, and rejects waits when the signal aborts", async () => {
    const failing = setup();
    failing.takeNext();
    failing.batches.fail(new Error("bad request"));
    await settle();
    expect(failing.failure()).toEqual(new Error("bad request"));

    const aborted = setup();
    aborted.takeNext();
    aborted.batches.add("a", "a1", MAX_PENDING_PER_OWNER);
    const room = aborted.batches.room("a", aborted.controller.signal);
    aborted.controller.abort(new Error("call over"));
    await expect(room).rejects.toThrow("call over");
    await settle();
    expect(aborted.failure()).toEqual(new Error("call over"));
  });
});
