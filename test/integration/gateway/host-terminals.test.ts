import { describe, expect, it } from "vitest";
import { AhpTestClient, contentText, rpcErrorOf } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { startTestGateway, useTestGateway } from "./harness.js";

const exits: string[] = [];
const gateway = useTestGateway({ onTerminalExit: (cwd) => exits.push(cwd) });

const claim = { session: "ahp-session:/s1", chat: "ahp-chat:/c1", turnId: "t1", toolCallId: "tool-1" };

describe("terminals a backend opens through the host's port", () => {
  it("are listed channels clients can subscribe to; the backend reads, writes, kills (still listed) and releases (gone)", async () => {
    const terminals = gateway.gateway.backend!;
    const watcher = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    const handle = await terminals.open({ cwd: "/tmp", program: "sh", args: ["-c", "echo ready; read line; echo got:$line; sleep 100"], claim, title: "backend job" });
    expect(handle.uri).toMatch(/^ahp-terminal:\/[0-9a-f-]{36}$/);
    await watcher.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes(handle.uri));
    const { snapshot: first } = await watcher.call("subscribe", { channel: handle.uri });
    expect(terminals.list().find((row) => row.uri === handle.uri)).toEqual({
      uri: handle.uri,
      title: "backend job",
      claim: { kind: "session", ...claim },
      lifecycle: { status: "running" },
    });

    let read = "";
    const reader = (async () => {
      for await (const text of handle.output) read += text;
    })();
    expect(await eventually(() => read.includes("ready"))).toBe(true);
    await handle.write("hello\r");
    expect(await eventually(() => read.includes("got:hello"))).toBe(true);
    await handle.resize(100, 30);
    expect((await watcher.call("subscribe", { channel: handle.uri })).snapshot.state).toMatchObject({ cols: 100, rows: 30 });

    await handle.kill();
    expect(await handle.exited).toEqual({ exitCode: 128, signal: "SIGTERM" });
    await reader;
    expect(terminals.list().find((row) => row.uri === handle.uri)?.lifecycle).toEqual({ status: "exited", exitCode: 128 });
    await expect(handle.write("x")).rejects.toThrow(/exited/);

    // A subscribed client read the same stream: the output before it subscribed in its snapshot, the rest live.
    await watcher.waitForEnvelope((e) => e.channel === handle.uri && e.action.type === "terminal/exited");
    expect(contentText(first.state) + watcher.outputOf(handle.uri)).toBe(read);

    const runnerId = gateway.runner.registry.list({ "ahp.uri": handle.uri })[0]!.id;
    await handle.release();
    expect(terminals.list().some((row) => row.uri === handle.uri)).toBe(false);
    expect(() => gateway.runner.registry.get(runnerId)).toThrow(/no terminal/);
    await expect(handle.resize(10, 10)).rejects.toThrow(/released/);
    watcher.close();
  });

  it("release ends a process that is still running, leaving nothing behind", async () => {
    const handle = await gateway.gateway.backend!.open({ cwd: "/tmp", program: "sleep 100", claim });
    const pid = gateway.runner.registry.list({ "ahp.uri": handle.uri })[0]!.snapshot().pid;
    await handle.release();
    expect(await handle.exited).toMatchObject({ exitCode: 128 });
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("run a shell line in the host's own shell, never a connection's defaultShell", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    client.dispatch("ahp-root://", { type: "root/configChanged", config: { defaultShell: "/bin/sh" } });
    await client.call("ping");
    const handle = await gateway.gateway.backend!.open({ cwd: "/tmp", program: 'echo "shell=$0"', claim });
    await handle.exited;
    let output = "";
    for await (const text of handle.output) output += text;
    expect(output).toContain("shell=/bin/bash");
    await handle.release();
    client.close();
  });
});

describe("! commands in a turn", () => {
  it("run the line in its own terminal in the session's first directory and return output and exit code", async () => {
    const watcher = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    const line = "!echo hi && pwd && exit 3";
    const result = await gateway.gateway.runTurnCommand({ ...claim, workingDirectories: ["file:///tmp", "file:///etc"], line: line.slice(1) });
    expect(result.exitCode).toBe(3);
    expect(result.output).toBe("hi\r\n/tmp\r\n");
    const listed = await watcher.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes(result.terminal));
    const row = (listed.action.terminals as Array<{ resource: string; title: string; claim: unknown }>).find((info) => info.resource === result.terminal);
    expect(row).toMatchObject({ title: "Terminal", claim: { kind: "session", session: claim.session, turnId: "t1", toolCallId: "tool-1" } });
    expect(exits).toContain("/tmp");
    watcher.close();
  });

  it("are advertised with terminalCommandPrefix by a host with a runner", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    const result = await client.call("initialize", { channel: "ahp-root://", protocolVersions: ["0.6.0"], clientId: "prefix" });
    expect(result.terminalCommandPrefix).toBe("!");
    client.close();
  });
});

describe("a host without a runner", () => {
  it("advertises no prefix, refuses createTerminal, and cannot run turn commands", async () => {
    const bare = await startTestGateway({ withRunner: false });
    try {
      const client = await AhpTestClient.connect(bare.url);
      const result = await client.call("initialize", { channel: "ahp-root://", protocolVersions: ["0.9.0"], clientId: "bare" });
      expect(result).not.toHaveProperty("terminalCommandPrefix");
      expect(await rpcErrorOf(client.call("createTerminal", { channel: "ahp-terminal:/x" }))).toMatchObject({ message: "This host does not serve createTerminal yet" });
      expect(bare.gateway.backend).toBeUndefined();
      await expect(bare.gateway.runTurnCommand({ ...claim, workingDirectories: [], line: "ls", provider: "claude" })).rejects.toThrow(
        "claude cannot run a command in a turn; use a terminal instead",
      );
      client.close();
    } finally {
      await bare.close();
    }
  });
});
