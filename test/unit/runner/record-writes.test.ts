import { Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";
import { createLogger } from "../../../lib/logger.js";
import { RetentionBudget } from "../../../services/runner/log/retention-budget.js";
import { DescriptorLimit } from "../../../services/runner/process/descriptor-limit.js";
import { createTerminalService } from "../../../services/runner/rpc/terminal-service.js";
import { SpawnGate } from "../../../services/runner/spawn/spawn-gate.js";
import { TerminalRegistry } from "../../../services/runner/terminal/terminal-registry.js";
import { codeOf } from "../../support/connect-code.js";
import { FakeLauncher } from "./fake-launcher.js";

const log = createLogger("silent", "test");

function setup() {
  const launcher = new FakeLauncher(true);
  const registry = new TerminalRegistry({ launcher, host: { env: { PATH: process.env.PATH }, cwd: "/" }, budget: new RetentionBudget(1 << 30), retainBytes: 1 << 20, maxTerminals: 50, closeGraceMs: 0 });
  const service = createTerminalService({ registry, spawnGate: new SpawnGate({ maxConcurrent: 4, maxQueued: 64 }), descriptors: new DescriptorLimit(log), heartbeatMs: 50, log });
  return { launcher, registry, client: createClient(TerminalService, createRouterTransport((router) => router.service(TerminalService, service))) };
}

describe("conditional label writes", () => {
  it("applies a write made from the current revision and refuses one from an older revision with ABORTED", async () => {
    const { client } = setup();
    const { terminal } = await client.spawn({ id: "a", argv: ["sh"], labels: { claim: "none" } });
    expect(terminal!.revision).toBe(1n);
    const won = await client.setLabels({ id: "a", set: { claim: "first" }, expectedRevision: 1n });
    expect(won.terminal).toMatchObject({ revision: 2n, labels: { claim: "first" } });
    expect(await codeOf(client.setLabels({ id: "a", set: { claim: "second" }, expectedRevision: 1n }))).toBe(Code.Aborted);
    expect((await client.get({ id: "a" })).terminal).toMatchObject({ revision: 2n, labels: { claim: "first" } });
    await client.setLabels({ id: "a", set: { claim: "anyone" } });
    expect((await client.get({ id: "a" })).terminal!.revision).toBe(3n);
  });

  it("counts a write that changes nothing as no change", async () => {
    const { client } = setup();
    await client.spawn({ id: "a", argv: ["sh"], labels: { k: "v" } });
    await client.setLabels({ id: "a", set: { k: "v" }, remove: ["absent"], expectedRevision: 1n });
    expect((await client.get({ id: "a" })).terminal!.revision).toBe(1n);
  });

  it("raises the revision for a resize, a title, an exit, and not for a resize to the same size", async () => {
    const { client, launcher } = setup();
    await client.spawn({ id: "a", argv: ["sh"] });
    await client.resize({ id: "a", cols: 80, rows: 24 });
    await client.resize({ id: "a", cols: 81, rows: 24 });
    launcher.last().emit("\x1b]2;t\x07");
    launcher.last().exit({ exitCode: 1, signal: "" });
    expect((await client.get({ id: "a" })).terminal!.revision).toBe(4n);
  });
});

describe("spawns with a unique label", () => {
  it("refuses a value another held terminal carries with ALREADY_EXISTS, until that terminal is closed", async () => {
    const { client, launcher } = setup();
    await client.spawn({ id: "a", argv: ["sh"], labels: { uri: "x" } });
    expect(await codeOf(client.spawn({ id: "b", argv: ["sh"], labels: { uri: "x" }, uniqueLabel: "uri" }))).toBe(Code.AlreadyExists);
    await client.spawn({ id: "c", argv: ["sh"], labels: { uri: "y" }, uniqueLabel: "uri" });
    launcher.processes[0]!.exit({ exitCode: 0, signal: "" });
    expect(await codeOf(client.spawn({ id: "b", argv: ["sh"], labels: { uri: "x" }, uniqueLabel: "uri" }))).toBe(Code.AlreadyExists);
    await client.close({ id: "a" });
    await client.spawn({ id: "b", argv: ["sh"], labels: { uri: "x" }, uniqueLabel: "uri" });
  });

  it("refuses a unique label that names none of the spawn's labels with INVALID_ARGUMENT", async () => {
    const { client, registry } = setup();
    expect(await codeOf(client.spawn({ argv: ["sh"], labels: { a: "1" }, uniqueLabel: "uri" }))).toBe(Code.InvalidArgument);
    expect(registry.size).toBe(0);
  });
});
