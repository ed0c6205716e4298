import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ChangeWaiter } from "../../../services/runner/terminal/changed-within.js";
import { ChangeSignal } from "../../../lib/change-signal.js";

/** A timer the test fires by hand. */
function manualTimer() {
  const pending = new Set<() => void>();
  return {
    timer: (_ms: number, task: () => void) => {
      pending.add(task);
      return () => pending.delete(task);
    },
    fireAll: () => [...pending].forEach((task) => task()),
    get count() {
      return pending.size;
    },
  };
}

describe("ChangeWaiter", () => {
  it("waits again and again with one abort listener, true on a change and false when the time runs out", async () => {
    const controller = new AbortController();
    const clock = manualTimer();
    const waiter = new ChangeWaiter(controller.signal, clock.timer);
    const changes = new ChangeSignal();
    for (let i = 0; i < 3; i++) {
      const changed = waiter.wait(changes.next(), 1_000);
      changes.fire();
      expect(await changed).toBe(true);
      // The timer of a wait that ended is cancelled.
      expect(clock.count).toBe(0);
    }
    const quiet = waiter.wait(changes.next(), 1_000);
    clock.fireAll();
    expect(await quiet).toBe(false);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    const endless = waiter.wait(changes.next(), Number.POSITIVE_INFINITY);
    expect(clock.count).toBe(0);
    changes.fire();
    expect(await endless).toBe(true);
    waiter.close();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("rejects the wait in progress when the signal aborts, and every wait after", async () => {
    const controller = new AbortController();
    const clock = manualTimer();
    const waiter = new ChangeWaiter(controller.signal, clock.timer);
    const waiting = waiter.wait(new ChangeSignal().next(), 1_000);
    controller.abort(new Error("gone"));
    await expect(waiting).rejects.toThrow("gone");
    expect(clock.count).toBe(0);
    await expect(waiter.wait(new ChangeSignal().next(), 1_000)).rejects.toThrow("gone");
  });
});
