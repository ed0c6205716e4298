import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ChangeKind, TerminalMode, TerminalService, TerminalState, type WatchRequestSchema, type WatchResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { QUIET_SHELL_ENV, useTestRunner } from "./harness.js";

type RunnerClient = Client<typeof TerminalService>;

/** A Watch stream read message by message (heartbeats skipped), which the test can break. */
function openWatch(client: RunnerClient, request: MessageInitShape<typeof WatchRequestSchema> = {}) {
  const abort = new AbortController();
  const stream = client.watch(request, { signal: abort.signal })[Symbol.asyncIterator]();
  return {
    async next(): Promise<WatchResponse> {
      for (;;) {
        const next = await stream.next();
        if (next.done) throw new Error("the Watch stream ended");
        if (next.value.event.case !== "heartbeat") return next.value;
      }
    },
    /** Reads up to `synced`; returns the listed terminals and the synced message's fields. */
    async synced() {
      const listed: string[] = [];
      for (;;) {
        const message = await this.next();
        if (message.event.case === "listed") listed.push(...message.event.value.terminals.map((terminal) => terminal.id));
        if (message.event.case === "synced") return { listed, sequence: message.sequence, ...message.event.value };
      }
    },
    /** Reads changes until `done` says stop; returns them as they came. */
    async changesUntil(done: (change: Change) => boolean): Promise<Change[]> {
      const seen: Change[] = [];
      for (;;) {
        const message = await this.next();
        if (message.event.case !== "changed") throw new Error(`expected a change, got ${message.event.case}`);
        const change = { sequence: message.sequence, kind: message.event.value.kind, ...message.event.value.terminal! };
        seen.push(change);
        if (done(change)) return seen;
      }
    },
    break: () => abort.abort(),
  };
}

type Change = { sequence: bigint; kind: ChangeKind } & NonNullable<Extract<WatchResponse["event"], { case: "changed" }>["value"]["terminal"]>;

describe("Watch on a real runner", () => {
  const runner = useTestRunner({ env: { ...process.env, ...QUIET_SHELL_ENV } });

  it("lists the terminals, then reports every change in order with a rising sequence and revision", async () => {
    const labels = { test: "order" };
    const { terminal: first } = await runner.grpc.spawn({ argv: ["sleep", "60"], mode: TerminalMode.PIPES, labels });
    const watch = openWatch(runner.connect, { labelSelector: labels });
    const synced = await watch.synced();
    expect(synced.listed).toEqual([first!.id]);
    expect(synced.epoch).not.toBe("");

    await runner.grpc.setLabels({ id: first!.id, set: { stage: "two" } });
    await runner.grpc.resize({ id: first!.id, cols: 120, rows: 40 });
    const { terminal: second } = await runner.grpc.spawn({ command: "printf '\\033]0;titled\\007'; read line", mode: TerminalMode.PTY, labels });
    const id = second!.id;
    const changes = await watch.changesUntil((change) => change.id === id && change.kind === ChangeKind.TITLE);
    await runner.grpc.write({ id, data: Buffer.from("\r") });
    changes.push(...(await watch.changesUntil((change) => change.id === id && change.kind === ChangeKind.EXITED)));
    await runner.grpc.close({ id: first!.id, graceMs: 100 });
    changes.push(...(await watch.changesUntil((change) => change.kind === ChangeKind.CLOSED)));
    watch.break();

    // Close ends the process first (exited), then releases the terminal (closed).
    expect(changes.map((change) => [change.id, change.kind])).toEqual([
      [first!.id, ChangeKind.LABELS],
      [first!.id, ChangeKind.RESIZED],
      [id, ChangeKind.SPAWNED],
      [id, ChangeKind.TITLE],
      [id, ChangeKind.EXITED],
      [first!.id, ChangeKind.EXITED],
      [first!.id, ChangeKind.CLOSED],
    ]);
    const sequences = changes.map((change) => change.sequence);
    expect(sequences[0]).toBeGreaterThan(synced.sequence);
    for (let i = 1; i < sequences.length; i++) expect(sequences[i]).toBeGreaterThan(sequences[i - 1]!);
    expect(changes.filter((change) => change.id === first!.id).map((change) => change.revision)).toEqual([2n, 3n, 4n, 5n]);
    expect(changes.at(-1)).toMatchObject({ state: TerminalState.CLOSED, labels: { ...labels, stage: "two" }, cols: 120 });
    expect(changes.find((change) => change.kind === ChangeKind.TITLE)).toMatchObject({ title: "titled" });
  });

  it("is refused without the runner's token, as every other call is", async () => {
    const anonymous = runner.clientFor((baseUrl) => createGrpcTransport({ baseUrl }));
    const failure = await openWatch(anonymous).next().catch((err: unknown) => ConnectError.from(err));
    expect(failure).toBeInstanceOf(ConnectError);
    expect((failure as ConnectError).code).toBe(Code.Unauthenticated);
  });

  it("resumes a broken stream from the last sequence it saw: no change lost or repeated", async () => {
    const labels = { test: "resume" };
    const { terminal } = await runner.grpc.spawn({ argv: ["sleep", "60"], mode: TerminalMode.PIPES, labels });
    const id = terminal!.id;
    const whole = openWatch(runner.grpc, { labelSelector: labels });
    const broken = openWatch(runner.connect, { labelSelector: labels });
    await whole.synced();
    const { epoch } = await broken.synced();
    const last = 99;
    const writes = (async () => {
      for (let n = 0; n <= last; n++) await runner.grpc.setLabels({ id, set: { n: String(n) } });
    })();
    const isLast = (change: Change): boolean => change.labels.n === String(last);
    const before = await broken.changesUntil((change) => change.labels.n === "30");
    broken.break();
    // The writes go on while nobody reads on the resumed side.
    const resumed = openWatch(runner.connect, { labelSelector: labels, resumeEpoch: epoch, resumeAfterSequence: before.at(-1)!.sequence });
    const accepted = await resumed.next();
    expect(accepted.event).toEqual({ case: "synced", value: expect.objectContaining({ resumed: true, restarted: false, epoch }) });
    const after = await resumed.changesUntil(isLast);
    const reference = await whole.changesUntil(isLast);
    await writes;
    resumed.break();
    whole.break();
    const numbers = (changes: Change[]) => changes.map((change) => [change.sequence, change.labels.n]);
    expect(numbers([...before, ...after])).toEqual(numbers(reference));
    expect(reference).toHaveLength(last + 1);
    await runner.grpc.close({ id, graceMs: 100 });
  });
});

describe("Watch on a runner with a small journal", () => {
  const runner = useTestRunner({ watch: { journalChanges: 64, journalBytes: 1 << 20, maxLagChanges: 32 } });

  it("answers a resume from a sequence it no longer holds, or from another runner, with a restarted full list", async () => {
    const { terminal } = await runner.grpc.spawn({ argv: ["sleep", "60"], mode: TerminalMode.PIPES });
    const id = terminal!.id;
    const first = openWatch(runner.grpc);
    const { epoch, sequence } = await first.synced();
    first.break();
    for (let n = 0; n < 100; n++) await runner.grpc.setLabels({ id, set: { n: String(n) } });
    for (const request of [{ resumeEpoch: epoch, resumeAfterSequence: sequence }, { resumeEpoch: "an earlier runner", resumeAfterSequence: sequence + 100n }]) {
      const again = openWatch(runner.grpc, request);
      const synced = await again.synced();
      again.break();
      expect(synced).toMatchObject({ listed: [id], restarted: true, resumed: false, epoch });
      expect(synced.sequence).toBe(sequence + 100n);
    }
    await runner.grpc.close({ id, graceMs: 100 });
  });
});

describe("Watch on a runner whose watchers may lag 32 changes", () => {
  const runner = useTestRunner({ watch: { journalChanges: 1024, journalBytes: 64 << 20, maxLagChanges: 32 } });

  it("ends a watcher that stops reading with RESOURCE_EXHAUSTED, and serves everyone else meanwhile", async () => {
    const { terminal } = await runner.grpc.spawn({ argv: ["sleep", "60"], mode: TerminalMode.PIPES });
    const id = terminal!.id;
    const stuck = openWatch(runner.connect);
    const reader = openWatch(runner.grpc);
    const { epoch } = await stuck.synced();
    await reader.synced();
    // Each change carries 8 KiB of labels: far more than the stuck stream's HTTP/2 windows hold.
    const changes = 200;
    const big = "x".repeat(8 * 1024);
    const reading = reader.changesUntil((change) => change.labels.n === String(changes));
    for (let n = 1; n <= changes; n++) await runner.grpc.setLabels({ id, set: { n: String(n), big } });
    const read = await reading;
    expect(read).toHaveLength(changes);
    expect((await runner.connect.list({})).terminals.map((info) => info.id)).toContain(id);

    const delivered: Change[] = [];
    const cut = await stuck.changesUntil((change) => (delivered.push(change), false)).catch((err: unknown) => ConnectError.from(err));
    expect(cut).toBeInstanceOf(ConnectError);
    expect((cut as ConnectError).code).toBe(Code.ResourceExhausted);
    expect(delivered.length).toBeLessThan(changes);
    // What it got before the cut came in order, and a resume picks up exactly after it.
    const resumed = openWatch(runner.connect, { resumeEpoch: epoch, resumeAfterSequence: delivered.at(-1)?.sequence ?? 0n });
    const synced = await resumed.synced();
    expect(synced).toMatchObject({ resumed: true, restarted: false });
    const rest = await resumed.changesUntil((change) => change.labels.n === String(changes));
    resumed.break();
    reader.break();
    expect([...delivered, ...rest].map((change) => change.labels.n)).toEqual(read.map((change) => change.labels.n));
    await runner.grpc.close({ id, graceMs: 100 });
  });
});
