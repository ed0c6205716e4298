import { describe, expect, it } from "vitest";
import { TerminalState as RunnerState } from "../../../gen/terminal/v1/terminal_pb.js";
import { RunnerPool } from "../../../gateway/runners/runner-pool.js";
import { StateStore } from "../../../gateway/state/store.js";
import { OpenTerminals } from "../../../gateway/terminals/open-terminals.js";
import { createLogger } from "../../../lib/logger.js";
import { watchRunner } from "../../../gateway/runners/runner-watch.js";
import { createFakeRunner, type FakeRunner } from "../../support/fake-runner.js";

const log = createLogger("silent", "test");
const output = (offset: number, text: string) => ({ offset: BigInt(offset), event: { case: "output" as const, value: { data: new TextEncoder().encode(text) } } });

async function watching(runner: FakeRunner, rebuildWaitMs?: number) {
  const runners = await RunnerPool.create([runner.url], { connect: () => runner, log, resolve: async () => [] });
  const store = new StateStore(10_000);
  const terminals = new OpenTerminals({ store, runners, log, defaultDirectory: "/tmp", rebuildWaitMs });
  await new Promise<void>((synced) => void watchRunner(runner, terminals, { log, signal: AbortSignal.timeout(10_000), synced }));
  return { store, terminals };
}

const settles = async (promise: Promise<void>, ms = 50): Promise<boolean> =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

describe("terminals are answered once rebuilt", () => {
  it("waits until the output the runner held when following began has become state, and for the exit of one that had exited", async () => {
    const runner = createFakeRunner();
    const live = runner.add({ id: "r1", labels: { "ahp.uri": "ahp-terminal:/live" }, endOffset: 10n });
    const gone = runner.add({ id: "r2", labels: { "ahp.uri": "ahp-terminal:/gone" }, endOffset: 3n, state: RunnerState.EXITED, exitCode: 2 });
    runner.add({ id: "r3", labels: { "ahp.uri": "ahp-terminal:/empty" }, endOffset: 0n });
    const { store, terminals } = await watching(runner);
    expect(store.terminalRows()).toHaveLength(3);
    expect(await settles(terminals.caughtUp(["ahp-terminal:/empty"]))).toBe(true);
    const both = terminals.caughtUp(["ahp-terminal:/live", "ahp-terminal:/gone"]);
    live.push(output(0, "hello"));
    expect(await settles(both)).toBe(false);
    live.push(output(5, "world"));
    gone.push(output(0, "bye"));
    expect(await settles(terminals.caughtUp(["ahp-terminal:/live"]))).toBe(true);
    expect(await settles(both)).toBe(false);
    gone.push({ offset: 3n, event: { case: "exited", value: { exitCode: 2 } } });
    expect(await settles(both)).toBe(true);
    expect(store.terminalState("ahp-terminal:/live")?.content).toEqual([{ type: "unclassified", value: "helloworld" }]);
    expect(store.terminalState("ahp-terminal:/gone")).toMatchObject({ lifecycle: { status: "exited", exitCode: 2 }, content: [{ type: "unclassified", value: "bye" }] });
  });

  it("stops waiting for a runner that does not replay, once: later requests are answered at once", async () => {
    const runner = createFakeRunner();
    runner.add({ id: "stuck", labels: { "ahp.uri": "ahp-terminal:/stuck" }, endOffset: 1000n });
    const { terminals } = await watching(runner, 100);
    const started = Date.now();
    await terminals.caughtUp(["ahp-terminal:/stuck"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(await settles(terminals.caughtUp(["ahp-terminal:/stuck"]), 20)).toBe(true);
  });
});
