import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { TerminalService, type AttachResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { createLogger } from "../../../lib/logger.js";
import { RetentionBudget } from "../../../services/runner/log/retention-budget.js";
import { DescriptorLimit } from "../../../services/runner/process/descriptor-limit.js";
import { SpawnGate } from "../../../services/runner/spawn/spawn-gate.js";
import { createTerminalService } from "../../../services/runner/rpc/terminal-service.js";
import { TerminalRegistry } from "../../../services/runner/terminal/terminal-registry.js";
import { FakeLauncher } from "./fake-launcher.js";

function setup() {
  const launcher = new FakeLauncher(true);
  const registry = new TerminalRegistry({
    launcher,
    host: { env: { PATH: process.env.PATH }, cwd: "/" },
    budget: new RetentionBudget(1 << 30),
    retainBytes: 16 << 20,
    maxTerminals: 10,
    closeGraceMs: 0,
  });
  const transport = createRouterTransport((router) =>
    router.service(TerminalService, createTerminalService({ registry, spawnGate: new SpawnGate({ maxConcurrent: 1, maxQueued: 16 }), descriptors: new DescriptorLimit(createLogger("silent", "test")), heartbeatMs: 10_000, log: createLogger("silent", "test") })),
  );
  return { launcher, client: createClient(TerminalService, transport) };
}

/** A flood as a pty delivers it: many reads in quick succession, each a turn of the event loop apart. */
async function flood(emit: (chunk: Buffer) => void, chunks: Buffer[]): Promise<void> {
  for (const chunk of chunks) {
    emit(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Splits `bytes` into reads of `size`, cutting through characters and sequences wherever the cut falls. */
const readsOf = (bytes: Buffer, size: number): Buffer[] => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe("Attach while a flood is batched", () => {
  it("delivers every byte once, in order, at contiguous offsets, in fewer messages than reads, and exited after the last byte", async () => {
    const { launcher, client } = setup();
    await client.spawn({ id: "f", argv: ["sh"] });
    const fake = launcher.last();
    const stream = client.attach({ id: "f", follow: true });
    // Multi-byte characters cut by the read size land in different reads; the bytes must come out whole.
    const line = "flood € ✓ 𝄞 line\r\n";
    const bytes = Buffer.from(line.repeat(20_000));
    const reads = readsOf(bytes, 4093);
    const events: AttachResponse[] = [];
    const collected = (async () => {
      for await (const event of stream) events.push(event);
    })();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await flood((chunk) => fake.emit(chunk), reads);
    fake.exit({ exitCode: 0, signal: "" });
    await collected;
    const outputs = events.filter((e) => e.event.case === "output");
    let expected = 0;
    for (const event of outputs) {
      expect(Number(event.offset)).toBe(expected);
      expected += event.event.case === "output" ? event.event.value.data.length : 0;
    }
    expect(Buffer.concat(outputs.map((e) => (e.event.case === "output" ? e.event.value.data : new Uint8Array()))).equals(bytes)).toBe(true);
    expect(outputs.length).toBeLessThan(reads.length / 2);
    const last = events.at(-1)!;
    expect(last.event.case).toBe("exited");
    expect(Number(last.offset)).toBe(bytes.length);
  });

  it("finds a shell mark split across reads inside a flood, at the offset where it ended", async () => {
    const { launcher, client } = setup();
    await client.spawn({ id: "m", argv: ["bash"] });
    const fake = launcher.last();
    const stream = client.attach({ id: "m", follow: true });
    const events: AttachResponse[] = [];
    const collected = (async () => {
      for await (const event of stream) events.push(event);
    })();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = Buffer.from("x".repeat(50_000));
    const mark = Buffer.from("\x1b]133;A\x07\x1b]133;C\x07");
    const after = Buffer.from("y".repeat(50_000));
    const bytes = Buffer.concat([before, mark, after]);
    // The cut at 50_003 falls inside the first mark.
    await flood((chunk) => fake.emit(chunk), [bytes.subarray(0, 50_003), ...readsOf(bytes.subarray(50_003), 4096)]);
    fake.exit({ exitCode: 0, signal: "" });
    await collected;
    const executed = events.find((e) => e.event.case === "commandExecuted");
    expect(executed).toBeDefined();
    expect(Number(executed!.offset)).toBe(before.length + mark.length);
    const output = Buffer.concat(events.flatMap((e) => (e.event.case === "output" ? [e.event.value.data] : [])));
    expect(output.equals(bytes)).toBe(true);
    expect(events.at(-1)!.event.case).toBe("exited");
  });

  it("sends what a flood batch gathered soon after the output stops, without waiting for more", async () => {
    const { launcher, client } = setup();
    await client.spawn({ id: "s", argv: ["sh"] });
    const fake = launcher.last();
    const stream = client.attach({ id: "s", follow: true });
    const total = 8 * 4096;
    let received = 0;
    let messages = 0;
    let lastByteAt = 0;
    const collected = (async () => {
      for await (const event of stream) {
        if (event.event.case !== "output") continue;
        received += event.event.value.data.length;
        messages++;
        if (received === total) return (lastByteAt = performance.now());
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await flood((chunk) => fake.emit(chunk), readsOf(Buffer.from("z".repeat(total)), 4096));
    const stopped = performance.now();
    await collected;
    // Batched (fewer messages than reads), and the batch ends at its 1 ms deadline once no more output lands.
    expect(messages).toBeLessThan(8);
    expect(lastByteAt - stopped).toBeLessThan(50);
  });

  it("sends a lone keystroke's echo at once, without waiting for a batch", async () => {
    const { launcher, client } = setup();
    await client.spawn({ id: "e", argv: ["cat"] });
    const fake = launcher.last();
    const stream = client.attach({ id: "e", follow: true })[Symbol.asyncIterator]();
    await new Promise((resolve) => setTimeout(resolve, 20));
    fake.emit("a");
    const started = performance.now();
    const first = await stream.next();
    expect(first.value?.event.case).toBe("output");
    // Far below any batching deadline a timer could impose on this path.
    expect(performance.now() - started).toBeLessThan(50);
    await stream.return?.(undefined);
  });
});
