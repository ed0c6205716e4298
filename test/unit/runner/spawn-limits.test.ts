import { Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";
import { createLogger } from "../../../lib/logger.js";
import { RetentionBudget } from "../../../services/runner/log/retention-budget.js";
import { DescriptorLimit } from "../../../services/runner/process/descriptor-limit.js";
import { SpawnGate } from "../../../services/runner/spawn/spawn-gate.js";
import { createTerminalService } from "../../../services/runner/rpc/terminal-service.js";
import { TerminalRegistry } from "../../../services/runner/terminal/terminal-registry.js";
import { eventually } from "../../support/eventually.js";
import { failureOf } from "../../support/connect-code.js";
import { FakeLauncher } from "./fake-launcher.js";

function setup(spawnGate: SpawnGate) {
  const launcher = new FakeLauncher();
  const registry = new TerminalRegistry({ launcher, host: { env: { PATH: process.env.PATH }, cwd: "/" }, budget: new RetentionBudget(1 << 20), retainBytes: 1 << 16, maxTerminals: 10, closeGraceMs: 0 });
  const log = createLogger("silent", "test");
  const transport = createRouterTransport((router) => router.service(TerminalService, createTerminalService({ registry, spawnGate, descriptors: new DescriptorLimit(log), heartbeatMs: 1000, log })));
  return { launcher, client: createClient(TerminalService, transport) };
}


describe("Spawn under the spawn gate", () => {
  it("queues spawns past the concurrent limit, refuses the one past the queue at once, and drops a queued one whose deadline passed", async () => {
    const gate = new SpawnGate({ maxConcurrent: 1, maxQueued: 1 });
    const { client, launcher } = setup(gate);
    let release!: () => void;
    const busy = gate.run(() => new Promise<void>((resolve) => (release = resolve)), new AbortController().signal);

    expect(await failureOf(client.spawn({ argv: ["sh"] }, { timeoutMs: 50 }))).toMatchObject({ code: Code.DeadlineExceeded });
    expect(gate.load).toEqual({ running: 1, waiting: 0 });

    const queued = client.spawn({ id: "queued", argv: ["sh"] });
    expect(await eventually(() => gate.load.waiting === 1)).toBe(true);
    expect(await failureOf(client.spawn({ id: "refused", argv: ["sh"] }))).toEqual({
      code: Code.ResourceExhausted,
      message: "the runner is already starting 1 terminals with 1 more waiting (its --max-concurrent-spawns and --max-queued-spawns); try again shortly",
    });
    expect(launcher.processes).toEqual([]);

    release();
    await busy;
    expect((await queued).terminal?.id).toBe("queued");
    expect(launcher.processes.map((process) => process.spec.file)).toEqual(["sh"]);
  });

  it("checks the request before it queues: a bad one is refused without waiting", async () => {
    const gate = new SpawnGate({ maxConcurrent: 1, maxQueued: 0 });
    const { client } = setup(gate);
    void gate.run(() => new Promise<void>(() => {}), new AbortController().signal);
    expect(await failureOf(client.spawn({ argv: ["sh"], cols: 0 }))).toMatchObject({ code: Code.InvalidArgument });
  });
});
