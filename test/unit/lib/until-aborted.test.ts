import { describe, expect, it } from "vitest";
import { untilAborted } from "../../../lib/until-aborted.js";
import { eventually } from "../../support/eventually.js";

/** Yields `items`, then waits forever, as a client stream that stays open does. */
async function* thenHang(items: number[]): AsyncGenerator<number> {
  yield* items;
  await new Promise(() => {});
}

describe("untilAborted", () => {
  it("passes a source through to its end", async () => {
    async function* finite() {
      yield* [1, 2, 3];
    }
    const seen: number[] = [];
    for await (const item of untilAborted(finite(), new AbortController().signal)) seen.push(item);
    expect(seen).toEqual([1, 2, 3]);
  });

  it("ends with the signal's reason while the source is still waiting", async () => {
    const controller = new AbortController();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const item of untilAborted(thenHang([1, 2]), controller.signal)) seen.push(item);
    })();
    // Still waiting: both items are through, and the source hangs.
    expect(await eventually(() => seen.length === 2)).toBe(true);
    controller.abort(new Error("shutting down"));
    await expect(reading).rejects.toThrow("shutting down");
    expect(seen).toEqual([1, 2]);
  });

  it("ends at once on a signal that was aborted already", async () => {
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    await expect((async () => {
      for await (const _ of untilAborted(thenHang([1]), controller.signal)) void _;
    })()).rejects.toThrow("gone");
  });
});
