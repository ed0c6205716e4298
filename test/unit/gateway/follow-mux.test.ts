import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it, vi } from "vitest";
import { FollowMux } from "../../../gateway/runners/follow-mux.js";
import type { RunnerClient } from "../../../gateway/runners/runner-client.js";
import { AttachResponseSchema, FollowResponseSchema, type AttachResponse, type FollowRequest, type FollowResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { createWritableIterable, type WritableIterable } from "@connectrpc/connect/protocol";

/** A runner whose Follow streams the test drives: every request that reached it, and responses pushed by hand. */
function scriptedRunner(options: { followUnimplemented?: boolean } = {}) {
  const streams: Array<{ requests: FollowRequest[]; ended: boolean; respond: WritableIterable<FollowResponse | Error> }> = [];
  const attaches: string[] = [];
  const runner = {
    follow(requests: AsyncIterable<MessageInitShape<any>>) {
      const stream = { requests: [] as FollowRequest[], ended: false, respond: createWritableIterable<FollowResponse | Error>() };
      streams.push(stream);
      void (async () => {
        for await (const request of requests) stream.requests.push(request as FollowRequest);
        stream.ended = true;
      })();
      return (async function* () {
        if (options.followUnimplemented) throw new ConnectError("no Follow here", Code.Unimplemented);
        for await (const item of stream.respond) {
          if (item instanceof Error) throw item;
          yield item;
        }
      })();
    },
    async *attach(request: { id: string }) {
      attaches.push(request.id);
      yield output(0, "from attach");
      yield create(AttachResponseSchema, { offset: 11n, event: { case: "exited", value: { exitCode: 0 } } });
    },
  };
  return { runner: runner as unknown as RunnerClient, streams, attaches };
}

const output = (offset: number, text: string): AttachResponse =>
  create(AttachResponseSchema, { offset: BigInt(offset), event: { case: "output", value: { data: Buffer.from(text), endOffset: BigInt(offset + text.length) } } });
const events = (...items: Array<[number, AttachResponse]>): FollowResponse =>
  create(FollowResponseSchema, { events: items.map(([followId, event]) => ({ followId, kind: { case: "event" as const, value: event } })) });
const ended = (followId: number, code = 0, message = ""): FollowResponse => create(FollowResponseSchema, { events: [{ followId, kind: { case: "end", value: { code, message } } }] });
const actions = (requests: FollowRequest[]) => requests.map(({ action }) => (action.case === "start" ? `start ${action.value.followId} ${action.value.attach?.id}` : `${action.case} ${String(action.value)}`));
const textOf = (event: AttachResponse): string => (event.event.case === "output" ? Buffer.from(event.event.value.data).toString() : String(event.event.case));

/** Reads a follow to its end into `into`; resolves with the error it ended with, if any. */
async function drain(iterable: AsyncIterable<AttachResponse>, into: string[]): Promise<unknown> {
  try {
    for await (const event of iterable) into.push(textOf(event));
  } catch (err) {
    return err;
  }
  return undefined;
}

describe("FollowMux", () => {
  it("carries several terminals on one stream and routes each one's events to its follower, in order", async () => {
    const { runner, streams } = scriptedRunner();
    const mux = new FollowMux(runner);
    const a: string[] = [];
    const b: string[] = [];
    const doneA = drain(mux.attach({ id: "a", fromOffset: 0n, follow: true }, { signal: new AbortController().signal }), a);
    const doneB = drain(mux.attach({ id: "b", fromOffset: 5n, follow: true }, { signal: new AbortController().signal }), b);
    await vi.waitFor(() => expect(streams[0]?.requests.length).toBe(2));
    expect(streams).toHaveLength(1);
    expect(actions(streams[0]!.requests)).toEqual(["start 1 a", "start 2 b"]);
    expect(streams[0]!.requests[1]!.action.value).toMatchObject({ attach: { fromOffset: 5n } });
    streams[0]!.respond.write(events([1, output(0, "a1")], [2, output(5, "b1")], [1, output(2, "a2")]));
    streams[0]!.respond.write(events([2, create(AttachResponseSchema, { offset: 7n, event: { case: "exited", value: { exitCode: 3 } } })]));
    streams[0]!.respond.write(ended(2));
    streams[0]!.respond.write(ended(1, Code.NotFound, "no terminal a"));
    expect(await doneB).toBeUndefined();
    expect(b).toEqual(["b1", "exited"]);
    const failure = await doneA;
    expect(a).toEqual(["a1", "a2"]);
    expect(failure).toBeInstanceOf(ConnectError);
    expect((failure as ConnectError).code).toBe(Code.NotFound);
    // Both ended at the runner: nothing to stop, and with no follow left the stream is closed.
    await vi.waitFor(() => expect(streams[0]!.ended).toBe(true));
    expect(actions(streams[0]!.requests)).toEqual(["start 1 a", "start 2 b"]);
  });

  it("tells the runner to stop a follow its follower left, and closes the stream when the last one leaves", async () => {
    const { runner, streams } = scriptedRunner();
    const mux = new FollowMux(runner);
    const leaveA = new AbortController();
    const leaveB = new AbortController();
    const doneA = drain(mux.attach({ id: "a" }, { signal: leaveA.signal }), []);
    const doneB = drain(mux.attach({ id: "b" }, { signal: leaveB.signal }), []);
    await vi.waitFor(() => expect(streams[0]?.requests.length).toBe(2));
    leaveA.abort();
    await doneA;
    await vi.waitFor(() => expect(actions(streams[0]!.requests)).toEqual(["start 1 a", "start 2 b", "stop 1"]));
    expect(streams[0]!.ended).toBe(false);
    leaveB.abort();
    await doneB;
    await vi.waitFor(() => expect(streams[0]!.ended).toBe(true));
    expect(actions(streams[0]!.requests)).toEqual(["start 1 a", "start 2 b", "stop 1", "stop 2"]);
    // The next follow opens a new stream.
    void drain(mux.attach({ id: "c" }, { signal: AbortSignal.timeout(5_000) }), []);
    await vi.waitFor(() => expect(streams).toHaveLength(2));
    await vi.waitFor(() => expect(actions(streams[1]!.requests)).toEqual(["start 1 c"]));
  });

  it("pauses a follow whose events are not taken and resumes it once they are, losing nothing", async () => {
    const { runner, streams } = scriptedRunner();
    const mux = new FollowMux(runner);
    const iterator = mux.attach({ id: "a" }, { signal: new AbortController().signal })[Symbol.asyncIterator]();
    const first = iterator.next();
    await vi.waitFor(() => expect(streams[0]?.requests.length).toBe(1));
    const chunk = "x".repeat(64 * 1024);
    // 6 chunks of 64 KiB: the first is taken at once, the other 320 KiB wait past the 256 KiB mark.
    for (let i = 0; i < 6; i++) streams[0]!.respond.write(events([1, output(i * chunk.length, chunk)]));
    await first;
    await vi.waitFor(() => expect(actions(streams[0]!.requests)).toEqual(["start 1 a", "pause 1"]));
    let taken = 1;
    // Taking four leaves 64 KiB: not yet under the resume mark, still paused; the last brings it under.
    for (; taken < 5; taken++) expect(textOf((await iterator.next()).value)).toBe(chunk);
    await new Promise((resolve) => setImmediate(resolve));
    expect(actions(streams[0]!.requests)).toEqual(["start 1 a", "pause 1"]);
    for (; taken < 6; taken++) expect(textOf((await iterator.next()).value)).toBe(chunk);
    await vi.waitFor(() => expect(actions(streams[0]!.requests)).toEqual(["start 1 a", "pause 1", "resume 1"]));
    streams[0]!.respond.write(ended(1));
    expect((await iterator.next()).done).toBe(true);
  });

  it("fails every follow when the stream breaks, and opens a new stream for the next", async () => {
    const { runner, streams } = scriptedRunner();
    const mux = new FollowMux(runner);
    const a: string[] = [];
    const doneA = drain(mux.attach({ id: "a" }, { signal: new AbortController().signal }), a);
    const doneB = drain(mux.attach({ id: "b" }, { signal: new AbortController().signal }), []);
    await vi.waitFor(() => expect(streams[0]?.requests.length).toBe(2));
    streams[0]!.respond.write(events([1, output(0, "before")]));
    streams[0]!.respond.write(new ConnectError("connection reset", Code.Unavailable));
    for (const failure of [await doneA, await doneB]) expect((failure as ConnectError).code).toBe(Code.Unavailable);
    expect(a).toEqual(["before"]);
    void drain(mux.attach({ id: "a", fromOffset: 6n }, { signal: AbortSignal.timeout(5_000) }), []);
    await vi.waitFor(() => expect(streams).toHaveLength(2));
  });

  it("attaches terminal by terminal to a runner without Follow", async () => {
    const { runner, streams, attaches } = scriptedRunner({ followUnimplemented: true });
    const mux = new FollowMux(runner);
    const a: string[] = [];
    expect(await drain(mux.attach({ id: "a" }, { signal: new AbortController().signal }), a)).toBeUndefined();
    expect(a).toEqual(["from attach", "exited"]);
    const b: string[] = [];
    expect(await drain(mux.attach({ id: "b" }, { signal: new AbortController().signal }), b)).toBeUndefined();
    expect(b).toEqual(["from attach", "exited"]);
    expect(attaches).toEqual(["a", "b"]);
    // Follow was tried once; the second terminal went straight to Attach.
    expect(streams).toHaveLength(1);
  });
});
