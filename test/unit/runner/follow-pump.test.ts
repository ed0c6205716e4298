import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AttachRequestSchema, FollowResponseSchema, type FollowEvent } from "../../../gen/terminal/v1/terminal_pb.js";
import { createLogger } from "../../../lib/logger.js";
import { FollowPump } from "../../../services/runner/rpc/follow-pump.js";
import { followResponseOf, type WireFollowEvent } from "../../../services/runner/rpc/follow-wire.js";
import { FollowBatches } from "../../../services/runner/terminal/follow-batches.js";
import { fakeTerminal } from "./fake-launcher.js";

/** A terminal on a fake process, one follow of it into batches that let it hold `room` bytes untaken, and the batches as they are taken. */
function setup(room: number) {
  const { registry, terminal, process } = fakeTerminal();
  const batches = new FollowBatches<object, WireFollowEvent>({ heartbeatMs: 60_000, maxPendingPerOwner: room });
  const pump = new FollowPump(7, create(AttachRequestSchema, { id: "t" }), { registry, batches, log: createLogger("silent", "test") });
  const ran = pump.run();
  const abort = new AbortController();
  const taken = batches.batches(abort.signal);
  /** The next batch, as the FollowEvents its response carries. */
  const nextBatch = async (): Promise<FollowEvent[]> => fromBinary(FollowResponseSchema, toBinary(FollowResponseSchema, followResponseOf((await taken.next()).value as WireFollowEvent[]))).events;
  return { terminal, process, pump, ran, nextBatch, abort };
}

const outputText = (events: FollowEvent[]): string =>
  events.map((event) => (event.kind.case === "event" && event.kind.value.event.case === "output" ? Buffer.from(event.kind.value.event.value.data).toString() : "")).join("");

describe("FollowPump", () => {
  it("moves output into the batches as the log takes it, in order, and waits for room one event at a time", async () => {
    const { terminal, process, nextBatch, abort, pump, ran } = setup(10);
    // One read of the log: output, a resize, output. The first event fills the follow's room, so the
    // pump holds the other two until that batch is taken.
    process.emit("0123456789");
    terminal.resize(100, 30);
    process.emit("abc");
    const first = await nextBatch();
    expect([outputText(first), first.length]).toEqual(["0123456789", 1]);
    // The resize's event fills the room again on its own.
    const second = await nextBatch();
    expect(second.map((event) => (event.kind.case === "event" ? event.kind.value.event.case : ""))).toEqual(["resized"]);
    expect(outputText(await nextBatch())).toBe("abc");
    process.emit("def");
    expect(outputText(await nextBatch())).toBe("def");
    pump.stop();
    await ran;
    abort.abort();
  });

  it("holds what it read while paused and moves it on resume, then ends with the terminal's exit", async () => {
    const { process, nextBatch, pump, ran } = setup(1 << 20);
    pump.pause();
    process.emit("while paused");
    process.exit({ exitCode: 0, signal: "" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    pump.resume();
    const events = await nextBatch();
    expect(outputText(events)).toBe("while paused");
    const kinds = events.map((event) => (event.kind.case === "event" ? event.kind.value.event.case : event.kind.case));
    expect(kinds.slice(-2)).toEqual(["exited", "end"]);
    await ran;
  });

  it("closes its reader and adds nothing more when stopped while it waits for output", async () => {
    const { terminal, process, nextBatch, pump, ran, abort } = setup(1 << 20);
    process.emit("x");
    expect(outputText(await nextBatch())).toBe("x");
    expect(terminal.readerCount).toBe(1);
    pump.stop();
    await ran;
    expect(terminal.readerCount).toBe(0);
    process.emit("after the stop");
    const next = nextBatch();
    const heartbeat = await Promise.race([next, new Promise<"quiet">((resolve) => setTimeout(() => resolve("quiet"), 50))]);
    expect(heartbeat).toBe("quiet");
    abort.abort();
    await next.catch(() => undefined);
  });
});
