import { describe, expect, it } from "vitest";
import { TerminalState as RunnerState } from "../../../gen/terminal/v1/terminal_pb.js";
import { RunnerPool } from "../../../gateway/runners/runner-pool.js";
import { StateStore } from "../../../gateway/state/store.js";
import { OpenTerminals } from "../../../gateway/terminals/open-terminals.js";
import { createLogger } from "../../../lib/logger.js";
import { createFakeRunner } from "../../support/fake-runner.js";

const log = createLogger("silent", "test");
const output = (offset: number, text: string) => ({ offset: BigInt(offset), event: { case: "output" as const, value: { data: new TextEncoder().encode(text) } } });

async function adopting(rebuildWaitMs?: number) {
  const runner = createFakeRunner();
  const runners = await RunnerPool.create([runner.url], { connect: () => runner, log, resolve: async () => [] });
  const store = new StateStore(10_000);
  return { runner, store, terminals: new OpenTerminals({ store, runners, log, defaultDirectory: "/tmp", rebuildWaitMs }) };
}

const settles = async (promise: Promise<void>, ms = 50): Promise<boolean> =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

describe("adopted terminals are answered once rebuilt", () => {
  it("waits until the output the runner held when listed has become state, and for the exit of one that had exited", async () => {
    const { runner, store, terminals } = await adopting();
    const live = runner.add({ id: "r1", labels: { "ahp.uri": "ahp-terminal:/live" }, endOffset: 10n });
    const gone = runner.add({ id: "r2", labels: { "ahp.uri": "ahp-terminal:/gone" }, endOffset: 3n, state: RunnerState.EXITED });
    runner.add({ id: "r3", labels: { "ahp.uri": "ahp-terminal:/empty" }, endOffset: 0n });
    expect(await terminals.adopt(runner)).toBe(3);
    expect(await settles(terminals.rebuilt(["ahp-terminal:/empty"]))).toBe(true);
    const all = terminals.rebuilt();
    live.push(output(0, "hello"));
    expect(await settles(all)).toBe(false);
    live.push(output(5, "world"));
    gone.push(output(0, "bye"));
    expect(await settles(terminals.rebuilt(["ahp-terminal:/live"]))).toBe(true);
    expect(await settles(all)).toBe(false);
    gone.push({ offset: 3n, event: { case: "exited", value: { exitCode: 2 } } });
    expect(await settles(all)).toBe(true);
    expect(store.terminalState("ahp-terminal:/live")?.content).toEqual([{ type: "unclassified", value: "helloworld" }]);
    expect(store.terminalState("ahp-terminal:/gone")?.lifecycle).toEqual({ status: "exited", exitCode: 2 });
  });

  it("stops waiting for a runner that does not replay, once: later requests are answered at once", async () => {
    const { runner, terminals } = await adopting(100);
    runner.add({ id: "stuck", labels: { "ahp.uri": "ahp-terminal:/stuck" }, endOffset: 1000n });
    await terminals.adopt(runner);
    const started = Date.now();
    await terminals.rebuilt();
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(await settles(terminals.rebuilt(["ahp-terminal:/stuck"]), 20)).toBe(true);
  });
});
