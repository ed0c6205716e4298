import { connect, type Socket } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { useStarted } from "../support/use-started.js";
import { useRunnerProcess } from "./runner-process.js";
import { startServiceProcess } from "./service-process.js";

/**
 * The gateway's open-file limit: a few dozen sockets exhaust it. Node's module loader reads the
 * gateway's modules many at a time as it starts (about 130 files open at once, measured with
 * prlimit), so the limit leaves room for that.
 */
const OPEN_FILES = 160;
/** Idle sockets are closed this long after they connected. */
const HEADERS_TIMEOUT_MS = 2_000;
/** A socket the gateway turns away is answered or dropped at once; one still open this long after it connected was taken. */
const LEFT_OPEN_AFTER_MS = 500;

const home = mkdtempSync(join(tmpdir(), "e2e-home-"));
const runner = useRunnerProcess(["--port", "0", "--token", "fd-runner"], { SHELL: "/bin/sh", HOME: home, ENV: "", PS1: "$ " });
// The compiled gateway, as npm start runs it, under a low open-file limit.
const gateway = useStarted(
  "the gateway process",
  () =>
    startServiceProcess(
      "gateway/main.ts",
      ["--port", "0", "--runner", runner.url, "--headers-timeout-ms", String(HEADERS_TIMEOUT_MS)],
      { RUNNER_TOKEN: "fd-runner", GATEWAY_TOKEN: undefined, HOME: home },
      { compiled: true, launcher: ["prlimit", `--nofile=${OPEN_FILES}:${OPEN_FILES}`] },
    ),
  (gateway) => gateway.stop(),
);

/** A socket that sends nothing; resolves with what became of it: answered 503 at once, dropped without a word, or left open. */
function idleSocket(port: number): Promise<{ socket: Socket; fate: "refused" | "dropped" | "open" }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    const open = setTimeout(() => resolve({ socket, fate: "open" }), LEFT_OPEN_AFTER_MS);
    let answer = "";
    socket.on("data", (data: Buffer) => (answer += data.toString()));
    socket.once("close", () => {
      clearTimeout(open);
      resolve({ socket, fate: answer.startsWith("HTTP/1.1 503 ") ? "refused" : "dropped" });
    });
  });
}

const logged = (text: string): Array<Record<string, unknown>> =>
  gateway.stderrLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => String(entry.msg).includes(text));

describe("a gateway that runs short of file descriptors", () => {
  it("refuses new sockets with 503 and a log line, keeps its clients, and lets new ones in once the idle sockets are gone", async () => {
    const port = Number(new URL(gateway.firstLine).port);
    const existing = await AhpTestClient.initialized(gateway.firstLine);
    const uri = "ahp-terminal:/fd-existing";
    await existing.call("createTerminal", { channel: uri });
    await existing.call("subscribe", { channel: uri });
    // As many sockets as the limit, opened faster than the idle ones time out.
    const opened = await Promise.all(Array.from({ length: OPEN_FILES }, () => idleSocket(port)));
    const sockets = opened.map(({ socket }) => socket);
    const fates = opened.map(({ fate }) => fate);
    // Some were let in, the rest refused with 503; none was dropped without a word (as accept's EMFILE would).
    expect(fates).toContain("open");
    expect(fates).toContain("refused");
    expect(fates).not.toContain("dropped");
    expect(logged("refused a connection: too many open")).toHaveLength(1);
    // It said at start how many connections its descriptors allow.
    expect(logged("the open-file limit leaves descriptors for fewer connections")).toHaveLength(1);
    // A newcomer is refused the same way, while the client it has keeps working, terminal and all.
    await expect(AhpTestClient.connect(gateway.firstLine)).rejects.toThrow("HTTP 503");
    existing.dispatch(uri, { type: "terminal/input", data: "echo still-$((6*7))\r" });
    await existing.waitForOutput(uri, /still-42/);
    // The idle sockets run out of time; then newcomers get in again, without a restart.
    expect(await eventually(() => sockets.every((socket) => socket.destroyed || socket.readableEnded), HEADERS_TIMEOUT_MS + 5_000)).toBe(true);
    const newcomer = await AhpTestClient.initialized(gateway.firstLine);
    await newcomer.call("subscribe", { channel: uri });
    expect(await newcomer.call("ping")).toBeNull();
    for (const socket of sockets) socket.destroy();
    newcomer.close();
    existing.close();
  }, 60_000);
});
