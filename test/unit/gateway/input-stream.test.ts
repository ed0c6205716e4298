import { describe, expect, it } from "vitest";
import { InputStream } from "../../../gateway/terminals/input-stream.js";
import type { RunnerClient } from "../../../gateway/runners/runner-client.js";
import { createLogger } from "../../../lib/logger.js";
import { eventually } from "../../support/eventually.js";

/** A runner that records what reached it, over the stream or call by call; its stream can be broken. */
function fakeRunner() {
  const received: string[] = [];
  let breakStream: (err: Error) => void = () => {};
  const runner = {
    async writeStream(messages: AsyncIterable<{ data: Uint8Array }>) {
      const broken = new Promise<never>((_, reject) => (breakStream = reject));
      const iterator = messages[Symbol.asyncIterator]();
      for (;;) {
        const next = await Promise.race([iterator.next(), broken]);
        if (next.done) return {};
        received.push(Buffer.from(next.value.data).toString());
      }
    },
    async write({ data }: { data: Uint8Array }) {
      received.push(Buffer.from(data).toString());
      return {};
    },
  };
  return { runner: runner as unknown as RunnerClient, received, breakStream: (err: Error) => breakStream(err) };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * Runs every promise job already queued. The stream reacts to a write, a resize or a break within
 * them (it uses no timers), so input still missing afterwards is held, not late.
 */
const promiseJobsRun = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const log = createLogger("silent", "test");

describe("InputStream", () => {
  it("holds input written after a resize until the resize is done, and not input written before it", async () => {
    const { runner, received } = fakeRunner();
    const input = new InputStream(runner, "t1", log);
    const resize = deferred();
    input.write(Buffer.from("before"));
    input.after(resize.promise);
    input.write(Buffer.from("after"));
    await promiseJobsRun();
    expect(received).toEqual(["before"]);
    resize.resolve();
    expect(await eventually(() => received.length === 2)).toBe(true);
    expect(received).toEqual(["before", "after"]);
    input.close();
  });

  it("lets a failed resize release the input behind it", async () => {
    const { runner, received } = fakeRunner();
    const input = new InputStream(runner, "t1", log);
    input.after(Promise.reject(new Error("runner gone")));
    input.write(Buffer.from("x"));
    expect(await eventually(() => received.length === 1)).toBe(true);
    expect(received).toEqual(["x"]);
    input.close();
  });

  it("keeps order and holds behind a resize after the stream broke and input goes call by call", async () => {
    const { runner, received, breakStream } = fakeRunner();
    const input = new InputStream(runner, "t1", log);
    input.write(Buffer.from("1"));
    expect(await eventually(() => received.length === 1)).toBe(true);
    breakStream(new Error("stream reset"));
    await promiseJobsRun();
    const resize = deferred();
    input.write(Buffer.from("2"));
    input.after(resize.promise);
    input.write(Buffer.from("3"));
    await promiseJobsRun();
    expect(received).toEqual(["1", "2"]);
    resize.resolve();
    expect(await eventually(() => received.length === 3)).toBe(true);
    expect(received).toEqual(["1", "2", "3"]);
  });
});
