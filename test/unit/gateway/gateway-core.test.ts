import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ChangeKind, TerminalState as RunnerState } from "../../../gen/terminal/v1/terminal_pb.js";
import { RunnerPool } from "../../../gateway/runners/runner-pool.js";
import { watchRunner } from "../../../gateway/runners/runner-watch.js";
import { StateStore } from "../../../gateway/state/store.js";
import { Dispatcher } from "../../../gateway/terminals/dispatch.js";
import { OpenTerminals } from "../../../gateway/terminals/open-terminals.js";
import { createLogger } from "../../../lib/logger.js";
import { eventually } from "../../support/eventually.js";
import { createFakeRunner, type FakeRunner } from "../../support/fake-runner.js";
import { RecordingPeer } from "../../support/recording-peer.js";

const log = createLogger("silent", "test");

async function gatewayOn(runner: FakeRunner) {
  const runners = await RunnerPool.create([runner.url], { connect: () => runner, log, resolve: async () => [] });
  const store = new StateStore(10_000);
  const terminals = new OpenTerminals({ store, runners, log, defaultDirectory: "/tmp" });
  const dispatcher = new Dispatcher({ store, terminals, log });
  return { store, terminals, dispatcher };
}

const output = (offset: number, text: string) => ({ offset: BigInt(offset), event: { case: "output" as const, value: { data: new TextEncoder().encode(text) } } });

describe("dispatching over an in-memory runner", () => {
  it("commits accepted actions (echoed to the sender with its origin, stamped in order) and carries them out in the runner", async () => {
    const runner = createFakeRunner();
    const { store, terminals, dispatcher } = await gatewayOn(runner);
    const uri = "ahp-terminal:/a";
    const link = await terminals.create({ uri, claim: { kind: "client", clientId: "alice" }, owner: "token-holder", cols: 80, rows: 24 });
    const alice = new RecordingPeer("alice");
    await terminals.caughtUp([uri]);
    store.channels.subscribe(uri, alice);
    const before = store.serverSeq;
    dispatcher.dispatch(alice, uri, 1, { type: "terminal/input", data: "é\r", extra: true });
    dispatcher.dispatch(alice, uri, 2, { type: "terminal/resized", cols: 100, rows: 30 });
    dispatcher.dispatch(alice, uri, 3, { type: "terminal/titleChanged", title: "mine" });
    const fake = runner.byId.get(link.runnerId)!;
    expect(await eventually(() => fake.input.length === 3 && fake.calls.length === 2)).toBe(true);
    expect(Buffer.from(fake.input).toString("utf8")).toBe("é\r");
    expect(fake.calls).toEqual(["resize 100x30", `labels {"ahp.title":"mine"}`]);
    const echoed = alice.envelopes(uri);
    expect(echoed.map((envelope) => [envelope.action, envelope.origin?.clientSeq])).toEqual([
      [{ type: "terminal/input", data: "é\r" }, 1],
      [{ type: "terminal/resized", cols: 100, rows: 30 }, 2],
      [{ type: "terminal/titleChanged", title: "mine" }, 3],
    ]);
    expect(echoed.map((envelope) => envelope.serverSeq)).toEqual([before + 1, before + 2, before + 3]);
    expect(store.terminalState(uri)).toMatchObject({ cols: 100, rows: 30, title: "mine" });
    // A title the program sets no longer replaces the one a client gave.
    fake.push({ offset: 0n, event: { case: "titleChanged", value: { title: "vim" } } });
    fake.push(output(0, "x"));
    expect(await eventually(() => store.terminalState(uri)?.content.length === 1)).toBe(true);
    expect(store.terminalState(uri)?.title).toBe("mine");
  });

  it("refuses, to the sender alone and without a new serverSeq: unknown types, host-only actions, missing grants, exited terminals, wrong channels", async () => {
    const runner = createFakeRunner();
    const { store, terminals, dispatcher } = await gatewayOn(runner);
    const uri = "ahp-terminal:/b";
    const link = await terminals.create({ uri, claim: { kind: "client", clientId: "bob" }, owner: "token-holder", cols: 80, rows: 24 });
    const bob = new RecordingPeer("bob", ["terminal:input"]);
    const watcher = new RecordingPeer("watcher");
    store.channels.subscribe(uri, watcher);
    const seq = store.serverSeq;
    dispatcher.dispatch(bob, uri, 1, { type: "terminal/data", data: "forged" });
    dispatcher.dispatch(bob, uri, 2, { type: "terminal/input", data: "ls\r" });
    dispatcher.dispatch(bob, uri, 3, { type: "root/configChanged", config: {} });
    dispatcher.dispatch(bob, "ahp-root://", 4, { type: "terminal/cleared" });
    dispatcher.dispatch(bob, "ahp-terminal:/nope", 5, { type: "terminal/cleared" });
    dispatcher.dispatch(bob, uri, 6, { type: "terminal/resized", cols: 0, rows: 10 });
    dispatcher.dispatch(bob, uri, 7, { type: "terminal/claimed", claim: { kind: "client", clientId: "" } });
    expect(bob.envelopes().map((envelope) => envelope.rejectionReason)).toEqual([
      '"terminal/data" is not an action clients may dispatch',
      "bob may not do this: it needs terminal:input",
      '"root/configChanged" cannot be dispatched to a terminal',
      '"terminal/cleared" cannot be dispatched to the root channel',
      "No terminal at ahp-terminal:/nope",
      "cols and rows must be integers from 1 to 2000",
      "invalid claim: a client claim needs a non-empty clientId",
    ]);
    expect(bob.envelopes().every((envelope) => envelope.serverSeq === seq)).toBe(true);
    expect(watcher.envelopes()).toEqual([]);
    expect(store.serverSeq).toBe(seq);
    runner.byId.get(link.runnerId)!.push({ offset: 0n, event: { case: "exited", value: { exitCode: 0 } } });
    expect(await eventually(() => !store.isRunning(uri))).toBe(true);
    dispatcher.dispatch(new RecordingPeer("carol"), uri, 1, { type: "terminal/resized", cols: 10, rows: 10 });
    expect(store.terminalState(uri)).toMatchObject({ cols: 80, rows: 24 });
  });

  it("keeps a connection's root config to itself", async () => {
    const { store, dispatcher } = await gatewayOn(createFakeRunner());
    const [one, two] = [new RecordingPeer("one"), new RecordingPeer("two")];
    store.channels.subscribe("ahp-root://", two);
    dispatcher.dispatch(one, "ahp-root://", 1, { type: "root/configChanged", config: { defaultShell: "/bin/sh" } });
    expect(one.envelopes()[0]).toMatchObject({ action: { type: "root/configChanged", config: { defaultShell: "/bin/sh" } }, origin: { clientId: "one", clientSeq: 1 } });
    expect(two.envelopes()).toEqual([]);
    expect(store.configOf(one)).toEqual({ defaultShell: "/bin/sh" });
    expect(store.configOf(two)).toEqual({});
  });
});

describe("runner events, translated", () => {
  it("become terminal actions: UTF-8 joined across chunks, output the runner stripped of shell marks, repeats dropped, exit last with the root list following", async () => {
    const runner = createFakeRunner();
    const { store, terminals } = await gatewayOn(runner);
    const uri = "ahp-terminal:/t";
    const link = await terminals.create({ uri, claim: { kind: "client", clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 });
    const peer = new RecordingPeer("c");
    store.channels.subscribe(uri, peer);
    store.channels.subscribe("ahp-root://", peer);
    const fake = runner.byId.get(link.runnerId)!;
    const euro = new TextEncoder().encode("€");
    // The log holds "a", an 8-byte OSC 133;A, then "€": the runner sends it without the mark, its end offset past it.
    fake.push({ offset: 0n, event: { case: "output", value: { data: new Uint8Array([...new TextEncoder().encode("a"), euro[0]!]), endOffset: 10n } } });
    fake.push({ offset: 10n, event: { case: "output", value: { data: euro.subarray(1) } } });
    fake.push({ offset: 12n, event: { case: "resized", value: { cols: 80, rows: 24 } } });
    fake.push({ offset: 12n, event: { case: "resized", value: { cols: 120, rows: 40 } } });
    fake.push({ offset: 12n, event: { case: "commandExecuted", value: { commandId: "cmd-1", commandLine: "ls", timestampMs: 5n } } });
    fake.push(output(12, "out\r\n"));
    fake.push({ offset: 17n, event: { case: "commandFinished", value: { commandId: "cmd-1", exitCode: 0, durationMs: 3n } } });
    fake.push({ offset: 17n, event: { case: "cwdChanged", value: { cwd: "/tmp" } } });
    fake.push({ offset: 17n, event: { case: "cwdChanged", value: { cwd: "/var" } } });
    fake.push({ offset: 17n, event: { case: "exited", value: { exitCode: 3 } } });
    expect(await eventually(() => !store.isRunning(uri))).toBe(true);
    const actions = peer.envelopes(uri).map((envelope) => envelope.action);
    expect(actions).toEqual([
      { type: "terminal/data", data: "a" },
      { type: "terminal/data", data: "€" },
      { type: "terminal/resized", cols: 120, rows: 40 },
      { type: "terminal/commandExecuted", commandId: "cmd-1", commandLine: "ls", timestamp: 5 },
      { type: "terminal/data", data: "out\r\n" },
      { type: "terminal/commandFinished", commandId: "cmd-1", exitCode: 0, durationMs: 3 },
      { type: "terminal/cwdChanged", cwd: "file:///var" },
      { type: "terminal/exited", exitCode: 3 },
    ]);
    const last = peer.envelopes().at(-1)!;
    expect(last.action).toMatchObject({ type: "root/terminalsChanged", terminals: [{ resource: uri, lifecycle: { status: "exited", exitCode: 3 } }] });
    expect(store.terminalState(uri)?.content).toMatchObject([{ type: "unclassified", value: "a€" }, { type: "command", output: "out\r\n", isComplete: true, exitCode: 0 }]);
  });

  it("re-attach from the last offset after a broken stream, and report a terminal the runner no longer knows as exited without a code", async () => {
    const runner = createFakeRunner();
    const { store, terminals } = await gatewayOn(runner);
    const uri = "ahp-terminal:/gone";
    const link = await terminals.create({ uri, claim: { kind: "client", clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 });
    await terminals.caughtUp([uri]);
    store.channels.subscribe(uri, new RecordingPeer("c"));
    const fake = runner.byId.get(link.runnerId)!;
    // "before " and a 5-byte mark the runner left out: the log up to offset 12.
    fake.push({ offset: 0n, event: { case: "output", value: { data: new TextEncoder().encode("before "), endOffset: 12n } } });
    expect(await eventually(() => store.terminalState(uri)?.content.length === 1)).toBe(true);
    fake.breakStreams(Code.Unavailable);
    fake.push(output(12, "after"));
    // Re-attached from the end offset 12, where the runner's log goes on: "before " is not taken twice.
    expect(await eventually(() => (store.terminalState(uri)?.content[0] as { value: string }).value === "before after", 5_000)).toBe(true);
    expect(fake.attaches).toEqual([
      { fromOffset: 0n, stripShellMarks: true },
      { fromOffset: 12n, stripShellMarks: true },
    ]);
    // A runner from before end_offset: its output covers its own bytes, and a re-attach goes on after them, not from 0.
    fake.pushAsOlderRunner({ offset: 17n, event: { case: "output", value: { data: new TextEncoder().encode(" old") } } });
    expect(await eventually(() => (store.terminalState(uri)?.content[0] as { value: string }).value === "before after old", 5_000)).toBe(true);
    fake.breakStreams(Code.Unavailable);
    expect(await eventually(() => fake.attaches.length === 3, 5_000)).toBe(true);
    expect(fake.attaches[2]).toEqual({ fromOffset: 21n, stripShellMarks: true });
    runner.byId.delete(link.runnerId);
    fake.breakStreams(Code.Unavailable);
    expect(await eventually(() => !store.isRunning(uri), 5_000)).toBe(true);
    expect(store.terminalState(uri)).toMatchObject({ lifecycle: { status: "exited" } });
    expect(store.terminalState(uri)?.exitCode).toBeUndefined();
  });
});

describe("the runner's record, watched", () => {
  it("opens the terminals that carry a gateway's labels, with claim and client title from them, and follows their changes", async () => {
    const runner = createFakeRunner();
    runner.add({ id: "r1", title: "bash", labels: { "ahp.uri": "ahp-terminal:/kept", "ahp.claim": '{"kind":"session","session":"ahp-session:/s","chat":"ahp-chat:/c"}', "ahp.title": "named" } });
    const plain = runner.add({ id: "r2", title: "top", labels: { "ahp.uri": "ahp-terminal:/plain" } });
    runner.add({ id: "r3", title: "someone else's", labels: {} });
    const { store, terminals } = await gatewayOn(runner);
    const stop = new AbortController();
    void watchRunner(runner, terminals, { log, signal: stop.signal });
    expect(await eventually(() => store.terminalRows().length === 2)).toBe(true);
    expect(store.terminalRows()).toEqual([
      { resource: "ahp-terminal:/kept", title: "named", claim: { kind: "session", session: "ahp-session:/s", chat: "ahp-chat:/c" }, lifecycle: { status: "running" } },
      { resource: "ahp-terminal:/plain", title: "top", claim: { kind: "client", clientId: "" }, lifecycle: { status: "running" } },
    ]);
    // Nobody reads them here: nothing is attached, yet the record's changes reach the state.
    expect(terminals.followedCount).toBe(0);
    plain.change(ChangeKind.TITLE, { title: "htop" });
    plain.change(ChangeKind.RESIZED, { cols: 100, rows: 30 });
    plain.change(ChangeKind.LABELS, { labels: { "ahp.claim": '{"kind":"client","clientId":"zoe"}' } });
    expect(await eventually(() => store.terminalSummary("ahp-terminal:/plain")?.claim.kind === "client" && store.terminalSummary("ahp-terminal:/plain")?.cols === 100)).toBe(true);
    expect(store.terminalSummary("ahp-terminal:/plain")).toMatchObject({ title: "htop", rows: 30, claim: { kind: "client", clientId: "zoe" } });
    expect(plain.attaches).toEqual([]);
    plain.change(ChangeKind.EXITED, { state: RunnerState.EXITED, exitCode: 4 });
    expect(await eventually(() => !store.isRunning("ahp-terminal:/plain"))).toBe(true);
    expect(store.terminalSummary("ahp-terminal:/plain")?.lifecycle).toEqual({ status: "exited", exitCode: 4 });
    // A client's title stays over the program's.
    const kept = runner.byId.get("r1")!;
    kept.push(output(0, "retained\r\n"));
    kept.info.endOffset = 10n;
    kept.push({ offset: 10n, event: { case: "titleChanged", value: { title: "program title" } } });
    await terminals.caughtUp(["ahp-terminal:/kept"]);
    expect(store.terminalState("ahp-terminal:/kept")?.content).toEqual([{ type: "unclassified", value: "retained\r\n" }]);
    expect(store.terminalState("ahp-terminal:/kept")?.title).toBe("named");
    // Closed in the runner (disposed through another gateway): gone here too.
    await runner.terminals.close({ id: "r1" });
    expect(await eventually(() => !store.isTerminal("ahp-terminal:/kept"))).toBe(true);
    stop.abort();
  });

  it("keeps a terminal spawned after the list it receives was taken, and lets go of one the runner no longer has", async () => {
    const runner = createFakeRunner();
    const { store, terminals } = await gatewayOn(runner);
    const spawned = await terminals.create({ uri: "ahp-terminal:/new", claim: { kind: "client", clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 });
    const gone = await terminals.create({ uri: "ahp-terminal:/gone", claim: { kind: "client", clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 });
    runner.byId.delete(gone.runnerId);
    // A list from before both spawns, delivered after them (the watch had just connected).
    terminals.listed(runner, [], false);
    expect(await eventually(() => !store.isTerminal("ahp-terminal:/gone"))).toBe(true);
    expect(store.isTerminal("ahp-terminal:/new")).toBe(true);
    expect(terminals.linkAt("ahp-terminal:/new")).toBe(spawned);
  });

  it("reports the terminals of a runner that restarted without them exited, keeping them listed with what was read of them", async () => {
    const runner = createFakeRunner();
    const { store, terminals } = await gatewayOn(runner);
    const stop = new AbortController();
    void watchRunner(runner, terminals, { log, signal: stop.signal });
    const unread = runner.add({ id: "r1", labels: { "ahp.uri": "ahp-terminal:/unread" } });
    const read = runner.add({ id: "r2", labels: { "ahp.uri": "ahp-terminal:/read" } });
    expect(await eventually(() => store.isTerminal("ahp-terminal:/read") && store.isTerminal("ahp-terminal:/unread"))).toBe(true);
    store.channels.subscribe("ahp-terminal:/read", new RecordingPeer("c"));
    read.push(output(0, "before the crash"));
    expect(await eventually(() => store.terminalState("ahp-terminal:/read")?.content.length === 1)).toBe(true);
    void unread;
    runner.restart();
    expect(await eventually(() => !store.isRunning("ahp-terminal:/read") && !store.isRunning("ahp-terminal:/unread"), 5_000)).toBe(true);
    expect(store.terminalRows().map((row) => [row.resource, row.lifecycle])).toEqual([
      ["ahp-terminal:/unread", { status: "exited" }],
      ["ahp-terminal:/read", { status: "exited" }],
    ]);
    expect(store.terminalState("ahp-terminal:/read")?.content).toEqual([{ type: "unclassified", value: "before the crash" }]);
    stop.abort();
  });

  it("resumes a broken watch from the last sequence it saw", async () => {
    const runner = createFakeRunner();
    const { store, terminals } = await gatewayOn(runner);
    const stop = new AbortController();
    void watchRunner(runner, terminals, { log, signal: stop.signal });
    expect(await eventually(() => runner.watches.length === 1)).toBe(true);
    runner.add({ id: "r1", labels: { "ahp.uri": "ahp-terminal:/one" } });
    expect(await eventually(() => store.isTerminal("ahp-terminal:/one"))).toBe(true);
    runner.breakWatches(Code.Unavailable);
    runner.add({ id: "r2", labels: { "ahp.uri": "ahp-terminal:/two" } });
    expect(await eventually(() => store.isTerminal("ahp-terminal:/two"), 5_000)).toBe(true);
    expect(runner.watches[1]).toEqual({ resumeEpoch: "fake-epoch", resumeAfterSequence: 1n });
    stop.abort();
  });
});
