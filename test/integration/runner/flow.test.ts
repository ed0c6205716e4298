import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { collect, endOffsetOf, eventually, HELD_FLOOD_WATCH_MS, runToExit, useTestRunner, waitForOutput } from "./harness.js";

const runner = useTestRunner({ retainBytes: 256 * 1024 });

/** How long a pipes flood whose leader exited is watched: unheld, its whole megabyte would be read in far less. */
const ORPHANED_FLOOD_WATCH_MS = 1_000;
/** Printed once `stty -echo raw` has taken effect, so input written after it is neither echoed nor edited. */
const RAW_MODE_ON = "raw-mode-on";

describe("flow control", () => {
  it("stops reading a flood nobody reads before the log overflows, and ^C still ends it at once", async () => {
    const { terminal } = await runner.grpc.spawn({ argv: ["yes"] });
    const id = terminal!.id;
    expect(await eventually(async () => (await endOffsetOf(runner.grpc, id)) >= 128 * 1024)).toBe(true);
    const settled = await endOffsetOf(runner.grpc, id);
    // Proves a non-event (no more reading), so it can only be a pause.
    await sleep(HELD_FLOOD_WATCH_MS);
    // Only what the kernel still held is read after the pause: the process is blocked, not spinning.
    expect((await endOffsetOf(runner.grpc, id)) - settled).toBeLessThan(128 * 1024);
    // And nothing was evicted: whoever attaches now still gets the first byte.
    expect(Number((await runner.grpc.get({ id })).terminal!.startOffset)).toBe(0);
    await runner.grpc.write({ id, data: Buffer.from([0x03]) });
    expect((await runToExit(runner.grpc, id)).exit).toEqual(expect.objectContaining({ exitCode: 128, signal: "SIGINT" }));
  });

  it("keeps a flood's first bytes for a reader that attaches late, then paces the rest to it", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "seq 1 300000" });
    // Late: the runner already holds as much of the flood as it takes without a reader.
    expect(await eventually(async () => (await endOffsetOf(runner.grpc, terminal!.id)) >= 128 * 1024)).toBe(true);
    const { events, output } = await collect(runner.grpc.attach({ id: terminal!.id, follow: true }));
    expect(events.some((event) => event.event.case === "gap")).toBe(false);
    const lines = output.toString().split("\r\n");
    expect(lines.slice(0, 3)).toEqual(["1", "2", "3"]);
    expect(lines.slice(-3)).toEqual(["299999", "300000", ""]);
  });

  it("keeps holding a pipes flood after its leader exits (Node would resume it), and delivers it whole once read", async () => {
    // The shell exits at once; its background job keeps writing into the same pipe.
    const { terminal } = await runner.grpc.spawn({ command: "head -c 1000000 /dev/zero | tr '\\0' x &", mode: TerminalMode.PIPES });
    const id = terminal!.id;
    // Proves a non-event (the flood is not read on once the leader is gone), so it can only be a pause.
    await sleep(ORPHANED_FLOOD_WATCH_MS);
    const held = (await runner.grpc.get({ id })).terminal!;
    expect(Number(held.startOffset)).toBe(0);
    expect(Number(held.endOffset)).toBeLessThan(256 * 1024);
    const { events, output } = await collect(runner.grpc.attach({ id, follow: true }));
    expect(events.some((event) => event.event.case === "gap")).toBe(false);
    expect(output.length).toBe(1_000_000);
    expect(output.every((byte) => byte === 0x78)).toBe(true);
  });

  it("paces a flood to its reader: a reader that keeps reading gets everything, in order, without gaps", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "seq 1 300000", mode: TerminalMode.PIPES });
    const { events, output } = await collect(runner.grpc.attach({ id: terminal!.id, follow: true }));
    expect(events.some((event) => event.event.case === "gap")).toBe(false);
    const lines = output.toString().split("\n");
    expect(lines.length).toBe(300001);
    expect(lines[299999]).toBe("300000");
  });

  it("keeps keystrokes behind the part of a paste the pty could not take at once", async () => {
    const paste = Array.from({ length: 4096 }, (_, i) => `${String(i).padStart(8, "0")}${"p".repeat(55)}\n`).join("");
    const keys = Array.from({ length: 64 }, (_, i) => String.fromCharCode(97 + (i % 26)));
    const total = paste.length + keys.length;
    const { terminal } = await runner.grpc.spawn({ command: `stty -echo raw; echo ${RAW_MODE_ON}; head -c ${total} | md5sum; sleep 5` });
    await waitForOutput(runner.grpc, terminal!.id, new RegExp(RAW_MODE_ON));
    // Awaited one by one, the writes reach the runner in this order; the paste fills the pty's input buffer at once.
    await runner.grpc.write({ id: terminal!.id, data: Buffer.from(paste) });
    for (const key of keys) await runner.grpc.write({ id: terminal!.id, data: Buffer.from(key) });
    const { createHash } = await import("node:crypto");
    const expected = createHash("md5").update(paste + keys.join("")).digest("hex");
    await waitForOutput(runner.grpc, terminal!.id, new RegExp(expected));
  });

  it("delivers a 1 MB paste complete and in order, while another terminal keeps answering", async () => {
    const paste = Array.from({ length: 16_384 }, (_, i) => `${String(i).padStart(8, "0")}${"x".repeat(55)}\n`).join("");
    expect(paste.length).toBe(1024 * 1024);
    const { terminal: sink } = await runner.grpc.spawn({ command: `stty -echo raw; echo ${RAW_MODE_ON}; head -c 1048576 | md5sum; sleep 5` });
    const { terminal: other } = await runner.grpc.spawn({ argv: ["cat"] });
    await waitForOutput(runner.grpc, sink!.id, new RegExp(RAW_MODE_ON));
    const pasted = runner.grpc.write({ id: sink!.id, data: Buffer.from(paste) });
    await runner.grpc.write({ id: other!.id, data: Buffer.from("still-responsive\r") });
    await waitForOutput(runner.grpc, other!.id, /still-responsive\r\n/);
    await pasted;
    const { createHash } = await import("node:crypto");
    const expected = createHash("md5").update(paste).digest("hex");
    await waitForOutput(runner.grpc, sink!.id, new RegExp(expected));
  });
});
