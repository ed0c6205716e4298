import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { TerminalMode } from "../../gen/terminal/v1/terminal_pb.js";
import { failureOf } from "../support/connect-code.js";
import { eventually, succeeds } from "../support/eventually.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";

/** The runner's open-file limit: room for its own start-up, then a few dozen terminals. */
const OPEN_FILE_LIMIT = 128;
const TOKEN = "descriptor-test-token";
/** A connection the runner turns away is closed at once; one still open this long after it connected was taken. */
const TURNED_AWAY_WITHIN_MS = 50;

const started: RunnerProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((runner) => runner.stop("SIGKILL")));
});

/** A runner whose open-file limit is OPEN_FILE_LIMIT. */
async function startLimitedRunner(args: string[] = []): Promise<RunnerProcess> {
  const home = mkdtempSync(join(tmpdir(), "runner-descriptors-"));
  const runner = await startRunnerProcess(["--port", "0", "--token", TOKEN, ...args], { HOME: home, SHELL: "/bin/sh" }, { launcher: ["prlimit", `--nofile=${OPEN_FILE_LIMIT}:${OPEN_FILE_LIMIT}`] });
  started.push(runner);
  return runner;
}


describe("a runner out of file descriptors", () => {
  it("refuses spawns with RESOURCE_EXHAUSTED saying how many are open, keeps its terminals working, and spawns again once some close", async () => {
    const runner = await startLimitedRunner();
    const client = runner.client(TOKEN);
    const { terminal: survivor } = await client.spawn({ argv: ["cat"], mode: TerminalMode.PTY });
    let seen = "";
    const reading = (async () => {
      for await (const event of client.attach({ id: survivor!.id, follow: true })) {
        if (event.event.case === "output") seen += Buffer.from(event.event.value.data).toString();
      }
    })().catch(() => undefined);

    const held: string[] = [];
    let refused: { code: Code; message: string } | undefined;
    for (let i = 0; i < OPEN_FILE_LIMIT && !refused; i++) {
      try {
        held.push((await client.spawn({ argv: ["sleep", "600"], mode: TerminalMode.PIPES })).terminal!.id);
      } catch (err) {
        refused = { code: ConnectError.from(err).code, message: ConnectError.from(err).rawMessage };
      }
    }
    const exhausted = { code: Code.ResourceExhausted, message: expect.stringMatching(new RegExp(`^the runner is out of file descriptors: \\d+ open, limit ${OPEN_FILE_LIMIT}; close terminals`)) };
    expect(refused).toEqual(exhausted);
    expect(held.length).toBeGreaterThan(5);
    expect(await failureOf(client.spawn({ argv: ["sleep", "600"], mode: TerminalMode.PTY }))).toEqual(exhausted);

    await client.write({ id: survivor!.id, data: Buffer.from("still here\r") });
    await expect.poll(() => seen, { timeout: 5_000 }).toMatch(/still here/);
    const warnings = runner.stderrLines.filter((line) => line.includes("the runner is out of file descriptors"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, limit: OPEN_FILE_LIMIT });

    for (const id of held.splice(0, 10)) await client.close({ id, graceMs: 100 });
    expect((await client.spawn({ argv: ["sleep", "600"], mode: TerminalMode.PIPES })).terminal?.state).toBeDefined();
    expect((await client.spawn({ argv: ["sleep", "600"], mode: TerminalMode.PTY })).terminal?.isPty).toBe(true);
    await client.close({ id: survivor!.id });
    await reading;
  });

  it("turns connections away before they take the last descriptors, says so, and keeps serving the ones it has", async () => {
    // Connections that never finish their start are kept for the whole test.
    const runner = await startLimitedRunner(["--handshake-timeout-ms", "120000"]);
    const client = runner.client(TOKEN);
    await client.list({});
    const { port } = new URL(runner.url);
    const held: Socket[] = [];
    let turnedAway = false;
    try {
      for (let i = 0; i < OPEN_FILE_LIMIT * 2 && !turnedAway; i++) {
        const socket = connect({ host: "127.0.0.1", port: Number(port) });
        socket.on("error", () => undefined);
        held.push(socket);
        const closed = new Promise<boolean>((resolve) => socket.once("close", () => resolve(true)));
        turnedAway = await Promise.race([closed, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), TURNED_AWAY_WITHIN_MS))]);
      }
      expect(turnedAway).toBe(true);
      await expect(client.list({})).resolves.toBeDefined();
      // Terminals still start: the connections stopped short of the descriptors a spawn needs.
      expect((await client.spawn({ argv: ["sleep", "600"], mode: TerminalMode.PIPES })).terminal?.pid).toBeGreaterThan(0);
      const warnings = runner.stderrLines.filter((line) => line.includes("connections refused: the runner is nearly out of file descriptors"));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, limit: OPEN_FILE_LIMIT });
    } finally {
      for (const socket of held) socket.destroy();
    }
    // Once the runner has seen them close, it serves again.
    expect(await eventually(() => succeeds(() => runner.client(TOKEN).list({})))).toBe(true);
  });
});
