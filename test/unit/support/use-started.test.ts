import { afterAll, describe, expect, it } from "vitest";
import { useStarted } from "../../support/use-started.js";

/** A stand-in for a started service: state, a getter over it and a method that changes it through `this`. */
function counter(): { count: number; readonly doubled: number; bump(): void } {
  return {
    count: 1,
    get doubled() {
      return this.count * 2;
    },
    bump() {
      this.count += 1;
    },
  };
}

describe("useStarted", () => {
  const events: string[] = [];
  // Registered before the fixture, so it runs after the fixture's own afterAll.
  afterAll(() => {
    expect(events).toEqual(["start", "stop 5"]);
    expect(() => started.count).toThrow("the counter is used outside the tests it was started for");
  });
  const started = useStarted(
    "the counter",
    async () => {
      events.push("start");
      return counter();
    },
    async (stopping) => {
      events.push(`stop ${stopping.count}`);
    },
  );
  let early: unknown;
  try {
    void started.count;
  } catch (err) {
    early = err;
  }

  it("throws, naming what it stands for, when used before its tests start", () => {
    expect(String(early)).toContain("the counter is used outside the tests it was started for");
  });

  it("has started it once before the tests, and reads, calls and writes through to it", () => {
    expect(events).toEqual(["start"]);
    started.bump();
    expect(started.count).toBe(2);
    started.count = 5;
    expect(started.doubled).toBe(10);
    expect("bump" in started).toBe(true);
  });
});
