import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { AttachResponse, FollowEvent } from "../../../gen/terminal/v1/terminal_pb.js";
import { RunnerMetrics } from "../../../services/runner/metrics.js";
import { scratchHome } from "../../support/scratch-home.js";
import { attachEventsOf, openFollow, outputOf, outputRanges } from "./follow-session.js";
import { collect, endOffsetOf, eventually, HELD_FLOOD_WATCH_MS, QUIET_SHELL_ENV, startTestRunner, subscribersIn, useTestRunner } from "./harness.js";

const metrics = new RunnerMetrics();
const HEARTBEAT_MS = 100;
const runner = useTestRunner({ metrics, heartbeatMs: HEARTBEAT_MS, retainBytes: 16 * 1024 * 1024, env: { ...process.env, ...QUIET_SHELL_ENV } });

const spawned = async (request: Parameters<typeof runner.grpc.spawn>[0]): Promise<string> => (await runner.grpc.spawn({ env: QUIET_SHELL_ENV, ...request })).terminal!.id;
/** Every event but output, as offset and kind, to compare streams by. */
const marksOf = (events: readonly AttachResponse[]): string[] => events.filter((event) => event.event.case !== "output").map((event) => `${event.offset} ${event.event.case}`);
const endOf = (events: readonly FollowEvent[]) => events.at(-1)?.kind;

/** Output an unread reader lets the runner read ahead (flow control's read credit). */
const READ_CREDIT_BYTES = 128 * 1024;

/** Checks that the output events cover the log from `from` without a hole, and returns where they end. */
function contiguousEnd(events: readonly AttachResponse[], from = 0): number {
  let at = from;
  for (const [start, end] of outputRanges(events)) {
    expect(start).toBe(at);
    at = end;
  }
  return at;
}

describe("Follow over HTTP/2", () => {
  it("carries two terminals on one stream: each one's bytes exactly as Attach gives them, at contiguous offsets, then exited and end", async () => {
    const ids = await Promise.all(["seq 1 20000", "seq 50000 80000"].map((line) => spawned({ command: `read go; ${line}` })));
    const follow = openFollow(runner.grpc);
    await follow.start(1, { id: ids[0] });
    await follow.start(2, { id: ids[1] });
    await Promise.all(ids.map((id) => runner.grpc.write({ id, data: Buffer.from("\r") })));
    const ended = await Promise.all([follow.ended(1), follow.ended(2)]);
    for (const [index, id] of ids.entries()) {
      const events = ended[index]!;
      expect(endOf(events)).toEqual({ case: "end", value: expect.objectContaining({ code: 0 }) });
      expect(events.filter((event) => event.kind.case === "end")).toHaveLength(1);
      const followed = attachEventsOf(events);
      expect(followed.at(-1)?.event.case).toBe("exited");
      const attached = await collect(runner.grpc.attach({ id }));
      expect(outputOf(followed)).toEqual(attached.output);
      expect(marksOf(followed)).toEqual(marksOf(attached.events));
      expect(contiguousEnd(followed)).toBe(Number(attached.events.at(-1)!.offset));
    }
    expect(outputOf(attachEventsOf(ended[0]!)).toString()).toMatch(/\r\n1\r\n2\r\n[\s\S]*\r\n20000\r\n$/);
    expect(await follow.closeAndFinish()).toBeUndefined();
  });

  it("honours from_offset and until_offset, and ends a follow with the code and message Attach would fail with", async () => {
    const id = await spawned({ command: "printf abcdefghij" });
    await collect(runner.grpc.attach({ id, follow: true }));
    const follow = openFollow(runner.grpc);
    await follow.start(1, { id, fromOffset: 2n, untilOffset: 7n });
    await follow.start(2, { id, fromOffset: 7n });
    await follow.start(3, { id, fromOffset: 6n, untilOffset: 5n });
    await follow.start(4, { id, fromOffset: 99n });
    const [cut, rest, backwards, beyond] = await Promise.all([1, 2, 3, 4].map((followId) => follow.ended(followId)));
    expect(attachEventsOf(cut!).map((event) => event.event.case)).toEqual(["output"]);
    expect(outputOf(attachEventsOf(cut!)).toString()).toBe("cdefg");
    expect(contiguousEnd(attachEventsOf(cut!), 2)).toBe(7);
    expect(endOf(cut!)).toEqual({ case: "end", value: expect.objectContaining({ code: 0 }) });
    expect(outputOf(attachEventsOf(rest!)).toString()).toBe("hij");
    expect(attachEventsOf(rest!).at(-1)?.event.case).toBe("exited");
    expect(backwards).toHaveLength(1);
    expect(endOf(backwards!)).toEqual({ case: "end", value: expect.objectContaining({ code: Code.InvalidArgument, message: "until_offset 5 is before from_offset 6" }) });
    const refused = await collect(runner.grpc.attach({ id, fromOffset: 99n })).catch((err: unknown) => ConnectError.from(err));
    expect(endOf(beyond!)).toEqual({ case: "end", value: expect.objectContaining({ code: Code.OutOfRange, message: (refused as ConnectError).rawMessage }) });
    expect(await follow.closeAndFinish()).toBeUndefined();
  });

  it("ends a follow of an unknown terminal with NOT_FOUND, refuses only the new follow of a follow_id in use, and serves the others on", async () => {
    const id = await spawned({ argv: ["cat"] });
    const follow = openFollow(runner.grpc);
    await follow.start(1, { id });
    await follow.start(2, { id: "no-such-terminal" });
    expect(await follow.ended(2)).toEqual([expect.objectContaining({ kind: { case: "end", value: expect.objectContaining({ code: Code.NotFound, message: 'no terminal with id "no-such-terminal"' }) } })]);
    await follow.start(1, { id: "no-such-terminal" });
    const refused = await follow.ended(1);
    expect(endOf(refused)).toEqual({ case: "end", value: expect.objectContaining({ code: Code.InvalidArgument, message: expect.stringMatching(/follow_id 1 is in use/) }) });
    await runner.grpc.write({ id, data: Buffer.from("still here\r") });
    await follow.until(() => outputOf(attachEventsOf(follow.eventsOf(1))).toString().includes("still here\r\n"));
    await runner.grpc.write({ id, data: Buffer.from([0x04]) });
    await follow.until(() => follow.eventsOf(1).filter((event) => event.kind.case === "end").length === 2);
    const after = follow.eventsOf(1).slice(refused.length);
    expect(attachEventsOf(after).at(-1)?.event.case).toBe("exited");
    expect(endOf(after)).toEqual({ case: "end", value: expect.objectContaining({ code: 0 }) });
    expect(await follow.closeAndFinish()).toBeUndefined();
  });

  it("stops a follow: nothing more for it, its reader closed, the others go on, and its id may start anew", async () => {
    const before = await subscribersIn(metrics);
    const [stopped, kept] = await Promise.all([spawned({ argv: ["cat"] }), spawned({ argv: ["cat"] })]);
    const follow = openFollow(runner.grpc);
    await follow.start(1, { id: stopped });
    await follow.start(2, { id: kept });
    expect(await eventually(async () => (await subscribersIn(metrics)) === before + 2)).toBe(true);
    await runner.grpc.write({ id: stopped, data: Buffer.from("one\r") });
    await follow.until(() => outputOf(attachEventsOf(follow.eventsOf(1))).toString().includes("one\r\n"));
    await follow.stop(1);
    expect(await eventually(async () => (await subscribersIn(metrics)) === before + 1)).toBe(true);
    expect(runner.registry.get(stopped).readerCount).toBe(0);
    const seen = follow.eventsOf(1).length;
    const endBefore = await endOffsetOf(runner.grpc, stopped);
    await runner.grpc.write({ id: stopped, data: Buffer.from("two\r") });
    expect(await eventually(async () => (await endOffsetOf(runner.grpc, stopped)) > endBefore)).toBe(true);
    await runner.grpc.write({ id: kept, data: Buffer.from("three\r") });
    await follow.until(() => outputOf(attachEventsOf(follow.eventsOf(2))).toString().includes("three\r\n"));
    expect(follow.eventsOf(1)).toHaveLength(seen);
    // Its number is free again: a new follow with it is served, not refused.
    await follow.start(1, { id: kept });
    await follow.until(() => outputOf(attachEventsOf(follow.eventsOf(1).slice(seen))).toString() === "three\r\nthree\r\n");
    follow.closeRequests();
    await runner.grpc.write({ id: kept, data: Buffer.from([0x04]) });
    expect(await follow.finished).toBeUndefined();
    expect(endOf(follow.eventsOf(1))).toEqual({ case: "end", value: expect.objectContaining({ code: 0 }) });
    expect(endOf(follow.eventsOf(2))).toEqual({ case: "end", value: expect.objectContaining({ code: 0 }) });
    expect(await eventually(async () => (await subscribersIn(metrics)) === before)).toBe(true);
    await runner.grpc.close({ id: stopped, graceMs: 0 });
  });

  it("pauses a flood: events stop, flow control holds the process, and resume delivers the rest, nothing lost or repeated", async () => {
    const id = await spawned({ command: "seq 1 300000" });
    const follow = openFollow(runner.grpc);
    const received = (): number => outputOf(attachEventsOf(follow.eventsOf(1))).length;
    await follow.start(1, { id });
    await follow.until(() => received() >= 64 * 1024);
    await follow.pause(1);
    // What was in flight arrives; then nothing more.
    let last = -1;
    for (let stable = 0; stable < 2; ) {
      await sleep(100);
      stable = received() === last ? stable + 1 : 0;
      last = received();
    }
    const held = await endOffsetOf(runner.grpc, id);
    await sleep(HELD_FLOOD_WATCH_MS);
    expect(received()).toBe(last);
    expect((await endOffsetOf(runner.grpc, id)) - held).toBeLessThan(READ_CREDIT_BYTES);
    expect(held).toBeLessThan(1024 * 1024);
    await follow.resume(1);
    const events = attachEventsOf(await follow.ended(1));
    expect(events.some((event) => event.event.case === "gap")).toBe(false);
    contiguousEnd(events);
    const lines = outputOf(events).toString().split("\r\n");
    expect(lines).toHaveLength(300_001);
    expect(lines.every((line, index) => index === 300_000 || line === String(index + 1))).toBe(true);
    expect(await follow.closeAndFinish()).toBeUndefined();
  });

  it("puts many busy terminals' events into far fewer messages than events, every byte delivered", async () => {
    const TERMINALS = 20;
    const LINES = 5_000;
    // Each line is a write of its own, so every terminal has new output in each of the runner's reads while they all print.
    const ids = await Promise.all(Array.from({ length: TERMINALS }, () => spawned({ command: `read go; for i in $(seq 1 ${LINES}); do echo line-$i; done` })));
    const before = await subscribersIn(metrics);
    const follow = openFollow(runner.grpc);
    for (const [index, id] of ids.entries()) await follow.start(index + 1, { id });
    // Every follow reads before any terminal prints: their output is live, not replayed.
    expect(await eventually(async () => (await subscribersIn(metrics)) === before + TERMINALS)).toBe(true);
    await Promise.all(ids.map((id) => runner.grpc.write({ id, data: Buffer.from("\r") })));
    const ended = await Promise.all(ids.map((_, index) => follow.ended(index + 1)));
    for (const events of ended) {
      const lines = outputOf(attachEventsOf(events)).toString().split("\r\n").filter((line) => line.startsWith("line-"));
      expect(lines).toEqual(Array.from({ length: LINES }, (_, i) => `line-${i + 1}`));
    }
    const events = ended.reduce((sum, list) => sum + list.length, 0);
    const messages = follow.messages.filter((message) => message.events.length > 0).length;
    expect(messages).toBeLessThan(0.7 * events);
    expect(await follow.closeAndFinish()).toBeUndefined();
  });

  it("keeps an idle stream alive with empty messages, and ends it once the requests ended and every follow did", async () => {
    const id = await spawned({ argv: ["cat"] });
    const follow = openFollow(runner.grpc);
    await follow.start(1, { id });
    await follow.until(() => follow.messages.filter((message) => message.events.length === 0).length >= 2);
    follow.closeRequests();
    let finished = false;
    void follow.finished.then(() => (finished = true));
    await runner.grpc.write({ id, data: Buffer.from("after the requests ended\r") });
    await follow.until(() => outputOf(attachEventsOf(follow.eventsOf(1))).toString().includes("after the requests ended\r\n"));
    expect(finished).toBe(false);
    await runner.grpc.write({ id, data: Buffer.from([0x04]) });
    expect(await follow.finished).toBeUndefined();
    expect(endOf(follow.eventsOf(1))).toEqual({ case: "end", value: expect.objectContaining({ code: 0 }) });
  });

  it("closes every follow's reader when the call is cancelled: one waiting for output, one paused, one held by a caller that reads nothing", async () => {
    const before = await subscribersIn(metrics);
    const [quiet, paused, flood] = await Promise.all([spawned({ argv: ["cat"] }), spawned({ argv: ["yes"] }), spawned({ argv: ["yes"] })]);
    const follow = openFollow(runner.grpc);
    await follow.start(1, { id: quiet });
    await follow.start(2, { id: paused });
    await follow.pause(2);
    await follow.until(() => follow.eventsOf(2).length > 0);
    // A second call whose caller takes one message and then nothing: its follow is held once its batches are not taken.
    const controller = new AbortController();
    const { createWritableIterable } = await import("@connectrpc/connect/protocol");
    const unreadRequests = createWritableIterable<{ action: { case: "start"; value: { followId: number; attach: { id: string } } } }>();
    const unread = runner.grpc.follow(unreadRequests, { signal: controller.signal })[Symbol.asyncIterator]();
    void unreadRequests.write({ action: { case: "start", value: { followId: 1, attach: { id: flood } } } });
    expect((await unread.next()).done).toBe(false);
    expect(await eventually(async () => (await subscribersIn(metrics)) === before + 3)).toBe(true);
    for (const id of [quiet, paused, flood]) expect(runner.registry.get(id).readerCount).toBe(1);
    follow.cancel();
    controller.abort();
    expect(ConnectError.from(await follow.finished).code).toBe(Code.Canceled);
    expect(await eventually(async () => (await subscribersIn(metrics)) === before)).toBe(true);
    for (const id of [quiet, paused, flood]) expect(runner.registry.get(id).readerCount).toBe(0);
    await Promise.all([quiet, paused, flood].map((id) => runner.grpc.close({ id, graceMs: 0 })));
  });
});

describe.skipIf(!existsSync("/bin/bash"))("Follow with strip_shell_marks, on bash under a pty", () => {
  it("leaves the shell marks out exactly as Attach does, also a mark split across two reads", async () => {
    const home = scratchHome();
    writeFileSync(join(home, ".bashrc"), "PS1='custom> '\n");
    const bash = await startTestRunner({ env: { PATH: process.env.PATH, HOME: home, SHELL: "/bin/bash", TERM: "xterm-256color" } });
    try {
      const id = (await bash.grpc.spawn({})).terminal!.id;
      const follow = openFollow(bash.grpc);
      await follow.start(1, { id, stripShellMarks: true });
      await follow.start(2, { id });
      const finished = (): number => attachEventsOf(follow.eventsOf(1)).filter((event) => event.event.case === "commandFinished").length;
      await follow.until(() => outputOf(attachEventsOf(follow.eventsOf(1))).toString().includes("custom> "));
      // The last line prints a 633 mark, then a 133 mark in two writes 300 ms apart: two reads of the pty.
      const typed = ["cd /tmp", "echo hi", "printf '\\e]633;E;x\\a\\e]13'; sleep 0.3; printf '3;B\\asplit-%s\\n' done"];
      for (const [index, line] of typed.entries()) {
        await bash.grpc.write({ id, data: Buffer.from(`${line}\r`) });
        await follow.until(() => finished() === index + 1);
      }
      await bash.grpc.write({ id, data: Buffer.from("exit\r") });
      const stripped = attachEventsOf(await follow.ended(1));
      const raw = attachEventsOf(await follow.ended(2));
      const attached = await collect(bash.grpc.attach({ id, stripShellMarks: true }));
      for (const mark of ["\x1b]133;", "\x1b]633;", "\x1b]7;"]) {
        expect(outputOf(raw).toString()).toContain(mark);
        expect(outputOf(stripped).toString()).not.toContain(mark);
      }
      expect(outputOf(stripped).toString()).toContain("split-done\r\n");
      expect(outputOf(stripped)).toEqual(attached.output);
      expect(marksOf(stripped)).toEqual(marksOf(attached.events));
      expect(contiguousEnd(stripped)).toBe(outputOf(raw).length);
      expect(await follow.closeAndFinish()).toBeUndefined();
    } finally {
      await bash.close();
    }
  }, 60_000);
});
