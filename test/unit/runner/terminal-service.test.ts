import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { codeOf } from "../../support/connect-code.js";
import { beforeEach, describe, expect, it } from "vitest";
import { TerminalService, TerminalState, type AttachResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { createBearerAuth } from "../../../services/runner/rpc/auth.js";
import { createLogger } from "../../../lib/logger.js";
import { RetentionBudget } from "../../../services/runner/log/retention-budget.js";
import { DescriptorLimit } from "../../../services/runner/process/descriptor-limit.js";
import { SpawnGate } from "../../../services/runner/spawn/spawn-gate.js";
import { createTerminalService } from "../../../services/runner/rpc/terminal-service.js";
import { TerminalRegistry } from "../../../services/runner/terminal/terminal-registry.js";
import { FakeLauncher } from "./fake-launcher.js";

const log = createLogger("silent", "test");

function setup(options: { ptyAvailable?: boolean; retainBytes?: number; maxTerminals?: number; token?: string } = {}) {
  const launcher = new FakeLauncher(options.ptyAvailable ?? true);
  const registry = new TerminalRegistry({
    launcher,
    host: { env: { PATH: process.env.PATH }, cwd: "/" },
    budget: new RetentionBudget(1 << 30),
    retainBytes: options.retainBytes ?? 1 << 20,
    maxTerminals: options.maxTerminals ?? 10,
    closeGraceMs: 0,
  });
  const transport = createRouterTransport(
    (router) => router.service(TerminalService, createTerminalService({ registry, spawnGate: new SpawnGate({ maxConcurrent: 1, maxQueued: 16 }), descriptors: new DescriptorLimit(createLogger("silent", "test")), heartbeatMs: 30, log })),
    { router: { interceptors: options.token ? [createBearerAuth(options.token)] : [] } },
  );
  return { launcher, registry, client: createClient(TerminalService, transport) };
}

async function collect(stream: AsyncIterable<AttachResponse>, until?: (event: AttachResponse) => boolean): Promise<AttachResponse[]> {
  const events: AttachResponse[] = [];
  for await (const event of stream) {
    events.push(event);
    if (until?.(event)) break;
  }
  return events;
}

describe("TerminalService over a router transport with fake processes", () => {
  let env: ReturnType<typeof setup>;
  let client: Client<typeof TerminalService>;
  beforeEach(() => {
    env = setup();
    client = env.client;
  });

  it("spawns with the requested size, title and labels, and describes the terminal", async () => {
    const { terminal } = await client.spawn({ id: "a", argv: ["sh"], cols: 100, rows: 30, title: "mine", labels: { k: "v" } });
    expect(terminal).toMatchObject({ id: "a", isPty: true, cols: 100, rows: 30, title: "mine", labels: { k: "v" }, state: TerminalState.RUNNING });
    expect(env.launcher.last().spec).toMatchObject({ file: "sh", cols: 100, rows: 30 });
    expect((await client.get({ id: "a" })).terminal?.pid).toBe(env.launcher.last().pid);
  });

  it("streams retained output, then live output, then exited with its offset", async () => {
    await client.spawn({ id: "a", argv: ["sh"] });
    const fake = env.launcher.last();
    fake.emit("early ");
    const stream = client.attach({ id: "a", follow: true });
    setTimeout(() => {
      fake.emit("late");
      fake.exit({ exitCode: 3, signal: "" });
    }, 20);
    const events = await collect(stream);
    expect(events.map((e) => e.event.case)).toContain("exited");
    const last = events.at(-1)!;
    expect(last.event).toEqual({ case: "exited", value: expect.objectContaining({ exitCode: 3, signal: "" }) });
    expect(last.offset).toBe(10n);
    const text = events.flatMap((e) => (e.event.case === "output" ? [Buffer.from(e.event.value.data).toString()] : [])).join("");
    expect(text).toBe("early late");
  });

  it("ends a non-following stream after the replay, without exited", async () => {
    await client.spawn({ id: "a", argv: ["sh"] });
    env.launcher.last().emit("hello");
    const events = await collect(client.attach({ id: "a", follow: false }));
    expect(events.map((e) => e.event.case)).toEqual(["output"]);
  });

  it("sends heartbeats on an idle stream", async () => {
    await client.spawn({ id: "a", argv: ["sh"] });
    const events = await collect(client.attach({ id: "a", follow: true }), (e) => e.event.case === "heartbeat");
    expect(events.at(-1)!.event.case).toBe("heartbeat");
  });

  it("stamps a heartbeat where the stream is: before an unfinished mark it holds back", async () => {
    await client.spawn({ id: "a", argv: ["sh"] });
    env.launcher.last().emit("ab\x1b]133;");
    const events = await collect(client.attach({ id: "a", follow: true, stripShellMarks: true }), (e) => e.event.case === "heartbeat");
    expect(events.map((e) => [e.event.case, e.offset])).toEqual([
      ["output", 0n],
      ["heartbeat", 2n],
    ]);
  });

  it("replays the tail and exited to an attach after exit, with a gap for what retention dropped", async () => {
    env = setup({ retainBytes: 4 });
    await env.client.spawn({ id: "a", argv: ["sh"] });
    env.launcher.last().emit("0123456789");
    env.launcher.last().exit({ exitCode: 0, signal: "" });
    const events = await collect(env.client.attach({ id: "a", follow: true }));
    expect(events.map((e) => e.event.case)).toEqual(["gap", "output", "exited"]);
    expect(events[0]!.event.value).toMatchObject({ fromOffset: 0n, toOffset: 6n });
    expect(events[1]!.offset).toBe(6n);
  });

  it("writes bytes and end of input, and refuses both after exit with FAILED_PRECONDITION", async () => {
    await client.spawn({ id: "a", argv: ["sh"] });
    const fake = env.launcher.last();
    await client.write({ id: "a", data: Buffer.from("ls\r"), eof: true });
    expect(Buffer.concat(fake.written).toString()).toBe("ls\r");
    expect(fake.inputEnded).toBe(true);
    fake.exit({ exitCode: 0, signal: "" });
    expect(await codeOf(client.write({ id: "a", data: Buffer.from("x") }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(client.resize({ id: "a", cols: 10, rows: 10 }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(client.signal({ id: "a", signal: "SIGINT" }))).toBe(Code.FailedPrecondition);
  });

  it("resizes, records a resized event once per change, and refuses bad sizes", async () => {
    await client.spawn({ id: "a", argv: ["sh"] });
    await client.resize({ id: "a", cols: 120, rows: 40 });
    await client.resize({ id: "a", cols: 120, rows: 40 });
    expect(env.launcher.last().sizes).toEqual([[120, 40]]);
    expect((await client.get({ id: "a" })).terminal).toMatchObject({ cols: 120, rows: 40 });
    const events = await collect(client.attach({ id: "a", follow: false }));
    expect(events.map((e) => e.event.case)).toEqual(["resized"]);
    expect(await codeOf(client.resize({ id: "a", cols: 0, rows: 10 }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.resize({ id: "a", cols: 10, rows: 100_000 }))).toBe(Code.InvalidArgument);
  });

  it("reads titles from OSC 0 and 2 in the output, at the offset where the sequence ended", async () => {
    await client.spawn({ id: "a", argv: ["sh"] });
    env.launcher.last().emit("ab\x1b]0;new title\x07cd");
    expect((await client.get({ id: "a" })).terminal?.title).toBe("new title");
    const events = await collect(client.attach({ id: "a", follow: false }));
    expect(events.map((e) => [e.event.case, e.offset])).toEqual([
      ["output", 0n],
      ["titleChanged", 16n],
      ["output", 16n],
    ]);
  });

  it("leaves shell marks out of a stream that asks, with end offsets over the log, and sends the bytes whole to one that does not", async () => {
    await client.spawn({ id: "a", argv: ["bash"] });
    const fake = env.launcher.last();
    const outputs = (events: AttachResponse[]) =>
      events.flatMap((e) => (e.event.case === "output" ? [[e.offset, Buffer.from(e.event.value.data).toString(), e.event.value.endOffset]] : []));
    fake.emit("ab\x1b]133;A\x07$ ");
    await client.write({ id: "a", data: Buffer.from("ls\r") });
    fake.emit("\x1b]133;C\x07out\r\n\x1b]13");
    // The unfinished mark is held back from the stream that strips, and sent to the other.
    const held = await collect(client.attach({ id: "a", follow: false, stripShellMarks: true }));
    expect(outputs(held)).toEqual([
      [0n, "ab$ ", 20n],
      [20n, "out\r\n", 25n],
    ]);
    expect(held.map((e) => [e.event.case, e.offset])).toEqual([
      ["output", 0n],
      ["commandDetectionAvailable", 20n],
      ["commandExecuted", 20n],
      ["output", 20n],
    ]);
    fake.emit("3;D;0\x07$ ");
    const all = Buffer.from("ab\x1b]133;A\x07$ \x1b]133;C\x07out\r\n\x1b]133;D;0\x07$ ").toString();
    const raw = await collect(client.attach({ id: "a", follow: false }));
    expect(outputs(raw).map(([, data]) => data).join("")).toBe(all);
    for (const [offset, data, end] of outputs(raw)) expect(end).toBe(BigInt(offset as bigint) + BigInt(Buffer.byteLength(data as string)));
    // Attaching again from the last end offset gives exactly the rest, after its events.
    const rest = await collect(client.attach({ id: "a", follow: false, stripShellMarks: true, fromOffset: 25n }));
    expect(rest.map((e) => [e.event.case, e.offset])).toEqual([
      ["output", 25n],
      ["commandFinished", 35n],
      ["output", 35n],
    ]);
    expect(outputs(rest)).toEqual([
      [25n, "", 35n],
      [35n, "$ ", 37n],
    ]);
  });

  it("clears retained output, and merges and removes labels", async () => {
    await client.spawn({ id: "a", argv: ["sh"], labels: { keep: "1", drop: "2" } });
    env.launcher.last().emit("secret");
    await client.clear({ id: "a" });
    const events = await collect(client.attach({ id: "a", follow: false }));
    expect(events.map((e) => e.event.case)).toEqual(["gap", "cleared"]);
    const { terminal } = await client.setLabels({ id: "a", set: { added: "3" }, remove: ["drop"] });
    expect(terminal?.labels).toEqual({ keep: "1", added: "3" });
  });

  it("lists terminals by label selector, oldest first", async () => {
    await client.spawn({ id: "a", argv: ["sh"], labels: { team: "x" } });
    await client.spawn({ id: "b", argv: ["sh"], labels: { team: "y" } });
    await client.spawn({ id: "c", argv: ["sh"], labels: { team: "x", role: "db" } });
    expect((await client.list({})).terminals.map((t) => t.id)).toEqual(["a", "b", "c"]);
    expect((await client.list({ labelSelector: { team: "x" } })).terminals.map((t) => t.id)).toEqual(["a", "c"]);
    expect((await client.list({ labelSelector: { team: "x", role: "db" } })).terminals.map((t) => t.id)).toEqual(["c"]);
  });

  it("answers every refusal with its precise code", async () => {
    await client.spawn({ id: "a", argv: ["sh"] });
    expect(await codeOf(client.spawn({ id: "a", argv: ["sh"] }))).toBe(Code.AlreadyExists);
    expect(await codeOf(client.get({ id: "nope" }))).toBe(Code.NotFound);
    expect(await codeOf(client.close({ id: "nope" }))).toBe(Code.NotFound);
    expect(await codeOf(collect(client.attach({ id: "nope" })))).toBe(Code.NotFound);
    expect(await codeOf(collect(client.attach({ id: "a", fromOffset: 99n })))).toBe(Code.OutOfRange);
    expect(await codeOf(client.signal({ id: "a", signal: "SIGNOPE" }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.spawn({ argv: ["sh"], command: "ls" }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.spawn({ cwd: "relative" }))).toBe(Code.InvalidArgument);
  });

  it("refuses spawns beyond the terminal limit with RESOURCE_EXHAUSTED", async () => {
    env = setup({ maxTerminals: 1 });
    await env.client.spawn({ argv: ["sh"] });
    expect(await codeOf(env.client.spawn({ argv: ["sh"] }))).toBe(Code.ResourceExhausted);
  });

  it("refuses PTY mode when node-pty is unavailable, and falls back to pipes in AUTO mode", async () => {
    env = setup({ ptyAvailable: false });
    expect(await codeOf(env.client.spawn({ argv: ["sh"], mode: 2 }))).toBe(Code.FailedPrecondition);
    expect((await env.client.spawn({ argv: ["sh"] })).terminal?.isPty).toBe(false);
  });

  it("answers an unexpected failure with a generic INTERNAL and releases the half-made terminal", async () => {
    env.launcher.failNext = new Error("EMFILE: secret detail");
    const error = await env.client.spawn({ id: "x", argv: ["sh"] }).catch((err: unknown) => ConnectError.from(err));
    expect(error).toMatchObject({ code: Code.Internal, rawMessage: "internal error in the terminal runner" });
    expect(await codeOf(env.client.get({ id: "x" }))).toBe(Code.NotFound);
  });

  it("closes a terminal and forgets it", async () => {
    await client.spawn({ id: "a", argv: ["sh"] });
    env.launcher.last().exit({ exitCode: 0, signal: "" });
    const { terminal } = await client.close({ id: "a" });
    expect(terminal).toMatchObject({ state: TerminalState.EXITED, exitCode: 0 });
    expect(await codeOf(client.get({ id: "a" }))).toBe(Code.NotFound);
  });

  it("writes the reason into the output and exits 127 when the directory is missing", async () => {
    await client.spawn({ id: "a", argv: ["sh"], cwd: "/no/such/place" });
    expect(env.launcher.processes).toHaveLength(0);
    const events = await collect(client.attach({ id: "a", follow: true }));
    expect(Buffer.from((events[0]!.event.value as { data: Uint8Array }).data).toString()).toContain("cannot start in /no/such/place");
    expect(events.at(-1)!.event).toEqual({ case: "exited", value: expect.objectContaining({ exitCode: 127 }) });
  });

  it("requires the bearer token when one is configured", async () => {
    env = setup({ token: "s3cret" });
    expect(await codeOf(env.client.list({}))).toBe(Code.Unauthenticated);
    expect(await codeOf(env.client.list({}, { headers: { authorization: "Bearer wrong" } }))).toBe(Code.Unauthenticated);
    await expect(env.client.list({}, { headers: { authorization: "Bearer s3cret" } })).resolves.toBeDefined();
  });
});
