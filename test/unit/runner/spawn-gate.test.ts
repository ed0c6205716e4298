import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { RunnerError } from "../../../services/runner/runner-error.js";
import { SpawnGate } from "../../../services/runner/spawn/spawn-gate.js";

/** A spawn that holds its slot until the test lets it finish. */
function heldSpawn(name: string, started: string[]): { spawn: () => Promise<string>; finish: () => void } {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    spawn: async () => {
      started.push(name);
      await done;
      return name;
    },
    finish,
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const never = new AbortController().signal;

describe("SpawnGate", () => {
  it("runs at most maxConcurrent spawns, queues maxQueued more in order, and refuses the next at once", async () => {
    const gate = new SpawnGate({ maxConcurrent: 2, maxQueued: 2 });
    const started: string[] = [];
    const spawns = ["a", "b", "c", "d"].map((name) => heldSpawn(name, started));
    const results = spawns.map(({ spawn }) => gate.run(spawn, never));
    const refused = gate.run(() => "e", never);
    await expect(refused).rejects.toEqual(
      new RunnerError("resource_exhausted", "the runner is already starting 2 terminals with 2 more waiting (its --max-concurrent-spawns and --max-queued-spawns); try again shortly"),
    );
    await turn();
    expect({ started, load: gate.load }).toEqual({ started: ["a", "b"], load: { running: 2, waiting: 2 } });
    spawns[1]!.finish();
    await turn();
    await turn();
    expect(started).toEqual(["a", "b", "c"]);
    for (const { finish } of spawns) finish();
    expect(await Promise.all(results)).toEqual(["a", "b", "c", "d"]);
    await turn();
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it("gives a slot back only after the event loop has had a turn, so a burst of synchronous spawns does not run back to back", async () => {
    const gate = new SpawnGate({ maxConcurrent: 1, maxQueued: 10 });
    const order: string[] = [];
    const spawns = [gate.run(() => order.push("spawn 1"), never), gate.run(() => order.push("spawn 2"), never)];
    setImmediate(() => order.push("other work"));
    await Promise.all(spawns);
    expect(order).toEqual(["spawn 1", "other work", "spawn 2"]);
  });

  it("drops a waiting spawn whose caller gave up, with the caller's reason, and lets the next one in", async () => {
    const gate = new SpawnGate({ maxConcurrent: 1, maxQueued: 1 });
    const started: string[] = [];
    const first = heldSpawn("first", started);
    void gate.run(first.spawn, never);
    const caller = new AbortController();
    const abandoned = gate.run(() => "abandoned", caller.signal);
    caller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
    await expect(abandoned).rejects.toMatchObject({ code: Code.DeadlineExceeded });
    expect(gate.load).toEqual({ running: 1, waiting: 0 });
    const next = gate.run(() => "next", never);
    first.finish();
    await expect(next).resolves.toBe("next");
    await expect(gate.run(() => "late", AbortSignal.abort(new ConnectError("gone", Code.Canceled)))).rejects.toMatchObject({ code: Code.Canceled });
  });
});
