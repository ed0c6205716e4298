import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";
import { createLogger } from "../../../lib/logger.js";
import { RunnerMetrics } from "../../../services/runner/metrics.js";
import { RetentionBudget } from "../../../services/runner/log/retention-budget.js";
import { DescriptorLimit } from "../../../services/runner/process/descriptor-limit.js";
import { SpawnGate } from "../../../services/runner/spawn/spawn-gate.js";
import { metricsInterceptor } from "../../../services/runner/rpc/metrics-interceptor.js";
import { createTerminalService } from "../../../services/runner/rpc/terminal-service.js";
import { TerminalRegistry } from "../../../services/runner/terminal/terminal-registry.js";
import { FakeLauncher } from "./fake-launcher.js";

describe("the RPC metrics interceptor", () => {
  it("counts a server stream by how it ended, not by how it began", async () => {
    const metrics = new RunnerMetrics();
    const registry = new TerminalRegistry({
      launcher: new FakeLauncher(true),
      host: { env: { PATH: process.env.PATH }, cwd: "/" },
      budget: new RetentionBudget(1 << 30),
      retainBytes: 1 << 20,
      maxTerminals: 10,
      closeGraceMs: 0,
    });
    const transport = createRouterTransport(
      (router) => router.service(TerminalService, createTerminalService({ registry, spawnGate: new SpawnGate({ maxConcurrent: 1, maxQueued: 16 }), descriptors: new DescriptorLimit(createLogger("silent", "test")), heartbeatMs: 30, log: createLogger("silent", "test") })),
      { router: { interceptors: [metricsInterceptor(metrics)] } },
    );
    const client = createClient(TerminalService, transport);
    await expect(
      (async () => {
        for await (const _ of client.attach({ id: "no-such-terminal" })) void _;
      })(),
    ).rejects.toThrow(/no terminal/);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^runner_rpc_requests_total\{method="Attach",code="NOT_FOUND"\} 1$/m);
    expect(text).not.toMatch(/^runner_rpc_requests_total\{method="Attach",code="OK"\}/m);
  });

  it("labels every code with its gRPC name: OK for success, never connect's CamelCase", async () => {
    const metrics = new RunnerMetrics();
    const registry = new TerminalRegistry({
      launcher: new FakeLauncher(true),
      host: { env: { PATH: process.env.PATH }, cwd: "/" },
      budget: new RetentionBudget(1 << 30),
      retainBytes: 1 << 20,
      maxTerminals: 10,
      closeGraceMs: 0,
    });
    const transport = createRouterTransport(
      (router) => router.service(TerminalService, createTerminalService({ registry, spawnGate: new SpawnGate({ maxConcurrent: 1, maxQueued: 16 }), descriptors: new DescriptorLimit(createLogger("silent", "test")), heartbeatMs: 30, log: createLogger("silent", "test") })),
      { router: { interceptors: [metricsInterceptor(metrics)] } },
    );
    const client = createClient(TerminalService, transport);
    await client.list({});
    await expect(client.resize({ id: "no-such-terminal", cols: 0, rows: 0 })).rejects.toThrow();
    await expect(client.spawn({ argv: ["ls"], command: "ls" })).rejects.toThrow();
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^runner_rpc_requests_total\{method="List",code="OK"\} 1$/m);
    expect(text).toMatch(/^runner_rpc_requests_total\{method="Spawn",code="INVALID_ARGUMENT"\} 1$/m);
    const codes = [...text.matchAll(/^runner_rpc_requests_total\{method="\w+",code="([^"]+)"\}/gm)].map(([, code]) => code);
    expect(codes.length).toBeGreaterThanOrEqual(3);
    for (const code of codes) expect(code).toMatch(/^[A-Z_]+$/);
  });
});
