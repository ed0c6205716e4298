import { mkdtempSync } from "node:fs";
import { freePort } from "../../lib/listen.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AhpTestClient, contentText, RpcFailure } from "../support/ahp-test-client.js";
import { eventually, succeeds } from "../support/eventually.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { startServiceProcess, type ServiceProcess } from "./service-process.js";

const RUNNER_TOKEN = "restart-runner-token";
const running: Array<RunnerProcess | ServiceProcess> = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((service) => service.stop("SIGKILL")));
});

async function runnerOn(port: number, home: string): Promise<RunnerProcess> {
  const runner = await startRunnerProcess(["--port", String(port), "--token", RUNNER_TOKEN], { SHELL: "/bin/sh", HOME: home, ENV: "", PS1: "$ " });
  running.push(runner);
  return runner;
}

async function gatewayFor(runnerUrl: string, home: string): Promise<ServiceProcess> {
  const gateway = await startServiceProcess("gateway/main.ts", ["--port", "0", "--runner", runnerUrl, "--token", "restart-gateway-token"], { RUNNER_TOKEN, HOME: home });
  running.push(gateway);
  return gateway;
}

async function snapshotText(client: AhpTestClient, uri: string): Promise<string> {
  return contentText((await client.call("subscribe", { channel: uri })).snapshot.state);
}

/** The `-32008` (NotFound) code: the only error VS Code's client falls back to `initialize` on. */
const NOT_FOUND = -32008;

/**
 * What VS Code's agent host client does on a new socket after losing one (`_reconnectOrInitialize`
 * in src/vs/platform/agentHost): `reconnect` with the root channel first among its subscriptions;
 * on -32008 alone, `initialize` with the same subscriptions on the same socket. Any other error is a
 * failed attempt, which VS Code retries with `reconnect` forever. Returns the snapshots it got.
 */
async function reconnectOrInitialize(client: AhpTestClient, clientId: string, lastSeenServerSeq: number, subscriptions: string[]): Promise<Array<{ resource: string; state: unknown }>> {
  const channels = ["ahp-root://", ...subscriptions];
  const meta = { clientConnectionKind: "remote" };
  try {
    const result = await client.call("reconnect", { clientId, lastSeenServerSeq, subscriptions: channels, _meta: meta });
    return result.snapshots;
  } catch (err) {
    if (!(err instanceof RpcFailure) || err.error.code !== NOT_FOUND) throw err;
  }
  const result = await client.call("initialize", {
    channel: "ahp-root://",
    protocolVersions: ["0.10.0", "0.9.0"],
    clientId,
    clientInfo: { name: "Visual Studio Code", version: "1.120.0" },
    _meta: meta,
    initialSubscriptions: channels,
  });
  return result.snapshots;
}

describe("a gateway killed with -9", () => {
  it("is replaced by a new one that adopts the runner's terminals with their content, and input works again", async () => {
    const home = mkdtempSync(join(tmpdir(), "restart-"));
    const runner = await runnerOn(0, home);
    const first = await gatewayFor(runner.url, home);
    const client = await AhpTestClient.initialized(first.firstLine, { clientId: "survivor" });
    const [typed, idle] = ["ahp-terminal:/typed", "ahp-terminal:/idle"];
    await client.call("createTerminal", { channel: typed, name: "typed one" });
    await client.call("createTerminal", { channel: idle });
    await client.call("subscribe", { channel: typed });
    client.dispatch(typed, { type: "terminal/input", data: "echo first-$((1+1))\r" });
    await client.waitForOutput(typed, /first-2\r\n/);

    await first.stop("SIGKILL");
    const second = await gatewayFor(runner.url, home);
    const again = await AhpTestClient.connect(second.firstLine);
    // The new gateway has never seen this client: VS Code's reconnect-or-initialize, as its client sends it.
    const snapshots = await reconnectOrInitialize(again, "survivor", 99, [typed, idle]);
    expect(snapshots.map((snapshot: { resource: string }) => snapshot.resource)).toEqual(["ahp-root://", typed, idle]);
    expect(snapshots[1]!.state).toMatchObject({ title: "typed one", lifecycle: { status: "running" } });
    expect(await eventually(async () => (await snapshotText(again, typed)).includes("first-2\r\n"))).toBe(true);
    again.dispatch(typed, { type: "terminal/input", data: "echo second-$((2+2))\r" });
    await again.waitForOutput(typed, /second-4\r\n/);
    again.close();
    client.close();
  });
});

describe("a runner killed with -9 mid-stream", () => {
  it("is survived: createTerminal fails fast while it is down, its terminals are reported exited, new ones work once it is back", async () => {
    const home = mkdtempSync(join(tmpdir(), "restart-"));
    const port = await freePort();
    const runner = await runnerOn(port, home);
    const gateway = await gatewayFor(runner.url, home);
    const client = await AhpTestClient.initialized(gateway.firstLine, { subscribe: ["ahp-root://"], versions: ["0.9.0"] });
    const streaming = "ahp-terminal:/streaming";
    await client.call("createTerminal", { channel: streaming });
    await client.call("subscribe", { channel: streaming });
    client.dispatch(streaming, { type: "terminal/input", data: "while :; do echo tick; sleep 0.05; done\r" });
    await client.waitForOutput(streaming, /tick\r\ntick\r\n/);

    await runner.stop("SIGKILL");
    const started = Date.now();
    const down = await client.call("createTerminal", { channel: "ahp-terminal:/while-down" }).catch((err: RpcFailure) => err);
    expect(down).toBeInstanceOf(RpcFailure);
    expect((down as RpcFailure).error.message).toMatch(/^Cannot create the terminal: the terminal runner is unavailable/);
    expect(Date.now() - started).toBeLessThan(3_000);

    await runnerOn(port, home);
    const exited = await client.waitForEnvelope((e) => e.channel === streaming && e.action.type === "terminal/exited", 20_000);
    expect(exited.action).not.toHaveProperty("exitCode");
    const rowOf = (e: { action: Record<string, unknown> }) => (e.action.terminals as Array<{ resource: string; lifecycle: { status: string } }> | undefined)?.find((row) => row.resource === streaming);
    await client.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && rowOf(e)?.lifecycle.status === "exited");
    expect(
      await eventually(() => succeeds(() => client.call("createTerminal", { channel: `ahp-terminal:/after-${Date.now()}` })), 10_000),
    ).toBe(true);
    client.close();
  }, 60_000);
});
