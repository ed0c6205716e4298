import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { MessageQueue } from "../../../gateway/runners/message-queue.js";

/** A source that records when it was paused and resumed. */
function source(): { calls: string[]; pause(): void; resume(): void } {
  const calls: string[] = [];
  return { calls, pause: () => calls.push("pause"), resume: () => calls.push("resume") };
}

describe("a response's message queue", () => {
  it("hands a message to a waiting reader, and keeps the order of those that wait", async () => {
    const queue = new MessageQueue<number>(source());
    const first = queue.next();
    queue.push(1);
    queue.push(2);
    queue.push(3);
    expect(await first).toEqual({ value: 1, done: false });
    queue.end();
    const rest: number[] = [];
    for await (const value of queue) rest.push(value);
    expect(rest).toEqual([2, 3]);
  });

  it("ends with an error only after the messages before it were read, and takes nothing after its end", async () => {
    const queue = new MessageQueue<number>(source());
    queue.push(1);
    queue.end(new ConnectError("gone", Code.Unavailable));
    queue.push(2);
    expect(await queue.next()).toEqual({ value: 1, done: false });
    await expect(queue.next()).rejects.toMatchObject({ code: Code.Unavailable });
  });

  it("fails a waiting reader when it ends with an error", async () => {
    const queue = new MessageQueue<number>(source());
    const waiting = queue.next();
    queue.end(new ConnectError("cancelled", Code.Canceled));
    await expect(waiting).rejects.toMatchObject({ code: Code.Canceled });
  });

  it("pauses its source above four waiting messages and resumes it once one is left", async () => {
    const from = source();
    const queue = new MessageQueue<number>(from);
    for (let i = 1; i <= 6; i++) queue.push(i);
    expect(from.calls).toEqual(["pause"]);
    for (let i = 1; i <= 4; i++) await queue.next();
    expect(from.calls).toEqual(["pause"]);
    await queue.next();
    expect(from.calls).toEqual(["pause", "resume"]);
  });
});
