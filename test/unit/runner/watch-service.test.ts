import { Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ChangeKind, TerminalService, TerminalState, type WatchResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { createLogger } from "../../../lib/logger.js";
import { RetentionBudget } from "../../../services/runner/log/retention-budget.js";
import { DescriptorLimit } from "../../../services/runner/process/descriptor-limit.js";
import { createTerminalService } from "../../../services/runner/rpc/terminal-service.js";
import { SpawnGate } from "../../../services/runner/spawn/spawn-gate.js";
import { DEFAULT_WATCH_LIMITS, type WatchLimits } from "../../../services/runner/terminal/change-journal.js";
import { TerminalRegistry } from "../../../services/runner/terminal/terminal-registry.js";
import { codeOf } from "../../support/connect-code.js";
import { FakeLauncher } from "./fake-launcher.js";

const log = createLogger("silent", "test");

function setup(watch: WatchLimits = DEFAULT_WATCH_LIMITS) {
  const launcher = new FakeLauncher(true);
  const registry = new TerminalRegistry({ launcher, host: { env: { PATH: process.env.PATH }, cwd: "/" }, budget: new RetentionBudget(1 << 30), retainBytes: 1 << 20, maxTerminals: 50, closeGraceMs: 0, watch });
  const service = createTerminalService({ registry, spawnGate: new SpawnGate({ maxConcurrent: 4, maxQueued: 64 }), descriptors: new DescriptorLimit(log), heartbeatMs: 50, log });
  const client = createClient(TerminalService, createRouterTransport((router) => router.service(TerminalService, service)));
  return { launcher, registry, client };
}

/** Reads a Watch stream's messages, skipping heartbeats, until `count` were read. */
async function take(stream: AsyncIterator<WatchResponse>, count: number): Promise<WatchResponse[]> {
  const taken: WatchResponse[] = [];
  while (taken.length < count) {
    const next = await stream.next();
    if (next.done) throw new Error(`the stream ended after ${taken.length} messages`);
    if (next.value.event.case !== "heartbeat") taken.push(next.value);
  }
  return taken;
}

function changes(messages: WatchResponse[]): Array<[number, ChangeKind, string, number]> {
  return messages.map((message) => {
    if (message.event.case !== "changed") throw new Error(`not a change: ${message.event.case}`);
    const { kind, terminal } = message.event.value;
    return [Number(message.sequence), kind, terminal!.id, Number(terminal!.revision)];
  });
}

describe("Watch over a router transport with fake processes", () => {
  it("lists the held terminals, marks the list complete, then reports every kind of change in sequence", async () => {
    const { client, launcher } = setup();
    await client.spawn({ id: "a", argv: ["sh"], labels: { k: "1" } });
    await client.spawn({ id: "b", argv: ["sh"] });
    const stream = client.watch({})[Symbol.asyncIterator]();
    const [listed, synced] = await take(stream, 2);
    expect(listed!.event.case === "listed" && listed!.event.value.terminals.map((t) => [t.id, Number(t.revision)])).toEqual([["a", 1], ["b", 1]]);
    expect(synced!.event).toEqual({ case: "synced", value: expect.objectContaining({ restarted: false, resumed: false, epoch: expect.any(String) }) });
    expect(synced!.sequence).toBe(2n);

    await client.setLabels({ id: "a", set: { k: "2" } });
    await client.resize({ id: "a", cols: 100, rows: 30 });
    const a = launcher.processes[0]!;
    a.emit("\x1b]0;new title\x07");
    a.emit("\x1b]7;file://host/tmp\x07");
    a.exit({ exitCode: 0, signal: "" });
    await client.close({ id: "a" });
    const seen = await take(stream, 6);
    expect(changes(seen)).toEqual([
      [3, ChangeKind.LABELS, "a", 2],
      [4, ChangeKind.RESIZED, "a", 3],
      [5, ChangeKind.TITLE, "a", 4],
      [6, ChangeKind.CWD, "a", 5],
      [7, ChangeKind.EXITED, "a", 6],
      [8, ChangeKind.CLOSED, "a", 7],
    ]);
    const last = seen.at(-1)!.event.value as { terminal: { state: TerminalState; labels: object; cwd: string; title: string; cols: number } };
    expect(last.terminal).toMatchObject({ state: TerminalState.CLOSED, labels: { k: "2" }, cwd: "/tmp", title: "new title", cols: 100 });
  });

  it("sends an empty list as one empty message, and a long one in several, each under the runner's largest response", async () => {
    const { client } = setup();
    const [empty, synced] = await take(client.watch({})[Symbol.asyncIterator](), 2);
    expect(empty!.event).toEqual({ case: "listed", value: expect.objectContaining({ terminals: [] }) });
    expect(synced!.event.case).toBe("synced");
    // 64 labels of 16 KiB: about 1 MiB of record per terminal, the most a terminal can carry.
    const labels = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, "x".repeat(16 * 1024)]));
    for (const id of ["a", "b", "c"]) await client.spawn({ id, argv: ["sh"], labels });
    const stream = client.watch({})[Symbol.asyncIterator]();
    const parts: string[][] = [];
    for (let message = await take(stream, 1); message[0]!.event.case === "listed"; message = await take(stream, 1)) {
      parts.push(message[0]!.event.value.terminals.map((terminal) => terminal.id));
    }
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.flat()).toEqual(["a", "b", "c"]);
  });

  it("shows a watcher with a selector only its terminals, and a terminal leaving it once", async () => {
    const { client } = setup();
    await client.spawn({ id: "mine", argv: ["sh"], labels: { team: "x" } });
    await client.spawn({ id: "other", argv: ["sh"] });
    const stream = client.watch({ labelSelector: { team: "x" } })[Symbol.asyncIterator]();
    const [listed] = await take(stream, 2);
    expect(listed!.event.case === "listed" && listed!.event.value.terminals.map((t) => t.id)).toEqual(["mine"]);
    await client.resize({ id: "other", cols: 90, rows: 20 });
    await client.spawn({ id: "joins", argv: ["sh"], labels: { team: "x" } });
    await client.setLabels({ id: "mine", remove: ["team"] });
    await client.resize({ id: "mine", cols: 90, rows: 20 });
    await client.setLabels({ id: "other", set: { team: "x" } });
    expect(changes(await take(stream, 3)).map(([, kind, id]) => [kind, id])).toEqual([
      [ChangeKind.SPAWNED, "joins"],
      [ChangeKind.LABELS, "mine"],
      [ChangeKind.LABELS, "other"],
    ]);
  });

  it("resumes after the last sequence seen, or sends a restarted full list when it cannot", async () => {
    const { client } = setup({ journalChanges: 4, journalBytes: 1 << 20, maxLagChanges: 2 });
    await client.spawn({ id: "a", argv: ["sh"] });
    const first = client.watch({})[Symbol.asyncIterator]();
    const [, synced] = await take(first, 2);
    const epoch = synced!.event.case === "synced" ? synced!.event.value.epoch : "";
    await first.return?.();
    await client.setLabels({ id: "a", set: { n: "1" } });
    await client.setLabels({ id: "a", set: { n: "2" } });

    const resumed = client.watch({ resumeEpoch: epoch, resumeAfterSequence: 1n })[Symbol.asyncIterator]();
    const [accepted, ...rest] = await take(resumed, 3);
    expect(accepted!.event).toEqual({ case: "synced", value: expect.objectContaining({ resumed: true, restarted: false, epoch }) });
    expect(changes(rest).map(([sequence]) => sequence)).toEqual([2, 3]);
    await resumed.return?.();

    for (let n = 3; n < 8; n++) await client.setLabels({ id: "a", set: { n: String(n) } });
    for (const request of [{ resumeEpoch: epoch, resumeAfterSequence: 1n }, { resumeEpoch: "another runner", resumeAfterSequence: 8n }]) {
      const [listed, restarted] = await take(client.watch(request)[Symbol.asyncIterator](), 2);
      expect(listed!.event.case === "listed" && listed!.event.value.terminals.map((t) => t.labels)).toEqual([{ n: "7" }]);
      expect(restarted!.event).toEqual({ case: "synced", value: expect.objectContaining({ restarted: true, resumed: false }) });
      expect(restarted!.sequence).toBe(8n);
    }
  });

  it("ends a watcher that fell too far behind with RESOURCE_EXHAUSTED", async () => {
    const { client, registry } = setup({ journalChanges: 64, journalBytes: 1 << 20, maxLagChanges: 8 });
    await client.spawn({ id: "a", argv: ["sh"] });
    const stream = client.watch({})[Symbol.asyncIterator]();
    await take(stream, 2);
    for (let n = 0; n < 20; n++) registry.get("a").setLabels({ n: String(n) }, []);
    expect(await codeOf(take(stream, 20))).toBe(Code.ResourceExhausted);
  });
});
