import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AhpTestClient, contentText, RpcFailure } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { runServiceToExit } from "./service-process.js";
import { startTwoProcesses, useTwoProcesses } from "./two-processes.js";

const system = useTwoProcesses();

const newUri = (): string => `agenthost-terminal://e2e/${crypto.randomUUID()}`;

async function openTerminal(client: AhpTestClient, params: Record<string, unknown> = {}): Promise<string> {
  const uri = newUri();
  await client.call("createTerminal", { channel: uri, claim: { kind: "client", clientId: "e2e" }, ...params });
  await client.call("subscribe", { channel: uri });
  return uri;
}

async function snapshotOf(client: AhpTestClient, uri: string): Promise<any> {
  return (await client.call("subscribe", { channel: uri })).snapshot.state;
}

describe("runner and gateway as two processes, driven over a WebSocket (the terminal suites of SPEC §9.2)", () => {
  it("prints the WebSocket URL with its token first, and refuses sockets without it", async () => {
    expect(system.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/\?tkn=[\w-]+$/);
    await expect(AhpTestClient.connect(system.url.replace(/\?.*/, ""))).rejects.toThrow("HTTP 401");
  });

  it("logs JSON lines to stderr that never contain the connection token", async () => {
    const token = new URL(system.url).searchParams.get("tkn")!;
    const entries = system.gateway.stderrLines.map((line) => JSON.parse(line) as { msg: string });
    expect(entries.map((entry) => entry.msg)).toContain("gateway listening");
    expect(system.gateway.stderrLines.join("\n")).not.toContain(token);
  });

  it("refuses a bad flag in one line with exit code 2", async () => {
    const { code, stderr } = await runServiceToExit("gateway/main.ts", ["--runner", "nowhere"]);
    expect(code).toBe(2);
    expect(stderr).toBe('gateway: --runner must be an http(s) URL, got "nowhere" (--help lists the flags)\n');
  });

  it("honours the cwd (same device and inode)", async () => {
    const client = await AhpTestClient.initialized(system.url, { clientId: "e2e" });
    const uri = await openTerminal(client, { cwd: `file://${system.home}` });
    client.dispatch(uri, { type: "terminal/input", data: "stat -c 'ino %d:%i' .\r" });
    const { dev, ino } = statSync(system.home);
    await client.waitForOutput(uri, new RegExp(`ino ${dev}:${ino}\\r\\n`));
    client.close();
  });

  it("delivers café\\r as UTF-8 bytes", async () => {
    const client = await AhpTestClient.initialized(system.url, { clientId: "e2e" });
    const uri = await openTerminal(client);
    // The marker is printed once echo is off (the echoed line shows it unexpanded), just before od reads.
    client.dispatch(uri, { type: "terminal/input", data: "stty -echo; echo echo-off-$((1+1)); od -An -tx1\r" });
    await client.waitForOutput(uri, /echo-off-2\r\n/);
    client.dispatch(uri, { type: "terminal/input", data: "café\r\u0004" });
    await client.waitForOutput(uri, /63 61 66 c3 a9 0a/);
    client.close();
  });

  it("resizes the child (73x19)", async () => {
    const client = await AhpTestClient.initialized(system.url, { clientId: "e2e" });
    const uri = await openTerminal(client);
    client.dispatch(uri, { type: "terminal/resized", cols: 73, rows: 19 });
    client.dispatch(uri, { type: "terminal/input", data: "stty size\r" });
    await client.waitForOutput(uri, /19 73\r\n/);
    client.close();
  });

  it("keeps a 40,000-character line in the snapshot", async () => {
    const client = await AhpTestClient.initialized(system.url, { clientId: "e2e" });
    const uri = await openTerminal(client);
    client.dispatch(uri, { type: "terminal/input", data: "head -c 40000 /dev/zero | tr '\\0' z; echo; echo done-$((4*4))\r" });
    await client.waitForOutput(uri, /done-16\r\n/);
    expect(contentText(await snapshotOf(client, uri))).toContain("z".repeat(40_000));
    client.close();
  });

  it("keeps two terminals isolated", async () => {
    const client = await AhpTestClient.initialized(system.url, { clientId: "e2e" });
    const [a, b] = [await openTerminal(client), await openTerminal(client)];
    client.dispatch(a, { type: "terminal/input", data: "echo mark-$((100+1))\r" });
    client.dispatch(b, { type: "terminal/input", data: "echo mark-$((200+2))\r" });
    await client.waitForOutput(a, /mark-101\r\n/);
    await client.waitForOutput(b, /mark-202\r\n/);
    expect(contentText(await snapshotOf(client, a))).not.toContain("mark-202");
    expect(contentText(await snapshotOf(client, b))).not.toContain("mark-101");
    client.close();
  });

  it("keeps output readable after an unsubscribed interval", async () => {
    const client = await AhpTestClient.initialized(system.url, { clientId: "e2e" });
    const uri = await openTerminal(client);
    client.notify("unsubscribe", { channel: uri });
    client.dispatch(uri, { type: "terminal/input", data: "echo unsubscribed-$((7*6))\r" });
    // Each look subscribes for the snapshot; unsubscribing again (listSessions: once the gateway took it) keeps the intervals unsubscribed.
    const readable = async (): Promise<boolean> => {
      if (contentText(await snapshotOf(client, uri)).includes("unsubscribed-42")) return true;
      client.notify("unsubscribe", { channel: uri });
      await client.call("listSessions", {});
      return false;
    };
    expect(await eventually(readable)).toBe(true);
    client.close();
  });

  it("rejects a duplicate URI and a subscription to an unknown terminal", async () => {
    const client = await AhpTestClient.initialized(system.url, { clientId: "e2e" });
    const uri = await openTerminal(client);
    const duplicate = await client.call("createTerminal", { channel: uri, claim: { kind: "client", clientId: "e2e" } }).catch((err: RpcFailure) => err);
    expect(duplicate).toBeInstanceOf(RpcFailure);
    expect((duplicate as RpcFailure).error.code).toBe(-32003);
    const unknown = await client.call("subscribe", { channel: newUri() }).catch((err: RpcFailure) => err);
    expect((unknown as RpcFailure).error.code).toBe(-32008);
    client.close();
  });

  it("transfers the claim from the client to a session and broadcasts a title change", async () => {
    const owner = await AhpTestClient.initialized(system.url, { clientId: "e2e", subscribe: ["ahp-root://"] });
    const watcher = await AhpTestClient.initialized(system.url, { clientId: "watcher", subscribe: ["ahp-root://"] });
    const uri = await openTerminal(owner);
    await watcher.call("subscribe", { channel: uri });
    owner.dispatch(uri, { type: "terminal/claimed", claim: { kind: "session", session: "ahp-session:/e2e" } });
    owner.dispatch(uri, { type: "terminal/titleChanged", title: "From e2e" });
    const title = await watcher.waitForEnvelope((e) => e.channel === uri && e.action.type === "terminal/titleChanged");
    expect(title.action.title).toBe("From e2e");
    await watcher.waitForEnvelope(
      (e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes('"From e2e"') && JSON.stringify(e.action).includes("ahp-session:/e2e"),
    );
    expect((await snapshotOf(watcher, uri)).claim).toEqual({ kind: "session", session: "ahp-session:/e2e" });
    owner.close();
    watcher.close();
  });

  it("removes a disposed terminal from the root list", async () => {
    const client = await AhpTestClient.initialized(system.url, { clientId: "e2e" });
    const uri = await openTerminal(client);
    await client.call("disposeTerminal", { channel: uri });
    const root = await snapshotOf(client, "ahp-root://");
    expect(root.terminals.map((info: { resource: string }) => info.resource)).not.toContain(uri);
    client.close();
  });

  it("shuts down on SIGTERM: sockets get 1001 and the gateway exits 0, leaving the runner's terminals running", async () => {
    const other = await startTwoProcesses();
    const client = await AhpTestClient.initialized(other.url, { clientId: "e2e" });
    await openTerminal(client);
    expect(await other.gateway.stop("SIGTERM")).toBe(0);
    expect(await client.closed()).toBe(1001);
    const runnerClient = other.runner.client("e2e-runner-token");
    expect((await runnerClient.list({})).terminals).toHaveLength(1);
    expect(await other.runner.stop()).toBe(0);
  });
});
