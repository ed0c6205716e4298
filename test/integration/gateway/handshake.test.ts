import { describe, expect, it } from "vitest";
import { AhpTestClient, RpcFailure } from "../../support/ahp-test-client.js";
import { useTestGateway } from "./harness.js";

const gateway = useTestGateway();
/** Long enough for a request already received to have made its terminal, in the gateway and in the runner. */
const CREATE_WOULD_HAVE_RUN_MS = 300;

const init = (clientId: string, protocolVersions: unknown[], initialSubscriptions?: string[]) => ({
  channel: "ahp-root://",
  protocolVersions,
  clientId,
  ...(initialSubscriptions ? { initialSubscriptions } : {}),
});

describe("initialize", () => {
  it("picks the highest offered version it speaks, whatever the order, and returns seq, server info and the default directory", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    const result = await client.call("initialize", init("c1", ["0.8.0", "1.0.0", "0.9.0"]));
    expect(result).toEqual({
      protocolVersion: "1.0.0",
      serverSeq: expect.any(Number),
      snapshots: [],
      defaultDirectory: `file://${gateway.home}`,
      serverInfo: { name: "ahp-terminal-gateway", version: "test" },
      terminalCommandPrefix: "!",
    });
    client.close();
  });

  it("leaves serverInfo out for 0.5.1, which does not know it", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    expect(await client.call("initialize", init("c2", ["0.5.1"]))).not.toHaveProperty("serverInfo");
    client.close();
  });

  it("returns snapshots for known initial subscriptions and skips unknown ones", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    const result = await client.call("initialize", init("c3", ["0.6.0"], ["ahp-terminal:/never", "ahp-root://"]));
    expect(result.snapshots).toEqual([{ resource: "ahp-root://", state: expect.objectContaining({ agents: [], terminals: expect.any(Array) }), fromSeq: result.serverSeq }]);
    expect(result.snapshots[0].state.config.schema.properties).toHaveProperty("defaultShell");
    client.close();
  });

  it("answers an empty or unknown version list with -32005 listing what it speaks, then closes", async () => {
    for (const offered of [[], ["999.0.0"]]) {
      const client = await AhpTestClient.connect(gateway.url);
      const failure = await client.call("initialize", init("old", offered)).catch((err: RpcFailure) => err);
      expect(failure.error).toMatchObject({ code: -32005, data: { supportedVersions: ["1.0.0", "0.10.0", "0.9.0", "0.8.0", "0.7.0", "0.6.0", "0.5.2", "0.5.1"] } });
      expect(await client.closed()).toBe(1002);
    }
  });

  it("runs nothing a socket sent after an initialize that failed, even requests already received", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    const ghost = `ahp-terminal:/ghost-${crypto.randomUUID()}`;
    // Pipelined in one write burst: the failed initialize, a valid one, then a createTerminal.
    client.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: init("ghost", ["9.9.9"]) }));
    client.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize", params: init("ghost", ["0.9.0"]) }));
    client.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "createTerminal", params: { channel: ghost } }));
    expect(await client.closed()).toBe(1002);
    expect(client.frames).toEqual([expect.objectContaining({ id: 1, error: expect.objectContaining({ code: -32005 }) })]);
    // Proves a non-event (no terminal is made), so it can only be a pause: a createTerminal that ran would have made one by then.
    await new Promise((resolve) => setTimeout(resolve, CREATE_WOULD_HAVE_RUN_MS));
    expect(gateway.gateway.store.hasChannel(ghost)).toBe(false);
    expect((await gateway.runner.grpc.list({})).terminals.some((info) => info.labels["ahp.uri"] === ghost)).toBe(false);
  });

  it("accepts a repeated initialize on one socket as a fresh handshake, keeping subscriptions", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    await client.call("initialize", init("first", ["0.6.0"], ["ahp-root://"]));
    await client.call("initialize", init("second", ["0.9.0"]));
    const other = await AhpTestClient.initialized(gateway.url);
    await other.call("createTerminal", { channel: "ahp-terminal:/reinit" });
    const listed = await client.waitForEnvelope((envelope) => envelope.action.type === "root/terminalsChanged");
    expect((listed.action.terminals as Array<Record<string, unknown>>)[0]).toHaveProperty("lifecycle", { status: "running" });
    await other.call("disposeTerminal", { channel: "ahp-terminal:/reinit" });
    client.close();
    other.close();
  });
});

describe("reconnect", () => {
  it("replays what a client missed, in order, and lists disposed channels as missing", async () => {
    const first = await AhpTestClient.connect(gateway.url);
    const { serverSeq } = await first.call("initialize", init("rc-1", ["0.7.0"], ["ahp-root://"]));
    await first.call("createTerminal", { channel: "ahp-terminal:/rc-keep" });
    await first.call("createTerminal", { channel: "ahp-terminal:/rc-gone" });
    // What this client last saw: the terminal's snapshot (its content is rebuilt from the runner when first read, so a
    // position from before then replays nothing of it), then the output it missed.
    const { snapshot } = await first.call("subscribe", { channel: "ahp-terminal:/rc-keep" });
    first.dispatch("ahp-terminal:/rc-keep", { type: "terminal/input", data: "echo replay-me\r" });
    await first.waitForOutput("ahp-terminal:/rc-keep", /replay-me\r\n/);
    first.close();
    await first.closed();
    await (await AhpTestClient.initialized(gateway.url)).call("disposeTerminal", { channel: "ahp-terminal:/rc-gone" });

    const second = await AhpTestClient.connect(gateway.url);
    const result = await second.call("reconnect", {
      channel: "ahp-root://",
      clientId: "rc-1",
      lastSeenServerSeq: snapshot.fromSeq,
      subscriptions: ["ahp-root://", "ahp-terminal:/rc-keep", "ahp-terminal:/rc-gone"],
    });
    expect(result.type).toBe("replay");
    expect(result.missing).toEqual(["ahp-terminal:/rc-gone"]);
    const seqs = result.actions.map((envelope: { serverSeq: number }) => envelope.serverSeq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(seqs[0]).toBeGreaterThan(serverSeq);
    const output = result.actions.filter((e: any) => e.action.type === "terminal/data").map((e: any) => e.action.data).join("");
    expect(output).toMatch(/replay-me\r\n/);
    // The version negotiated before is kept: 0.7 rows carry no lifecycle.
    const lastList = result.actions.filter((e: any) => e.action.type === "root/terminalsChanged").at(-1);
    expect(lastList.action.terminals[0]).not.toHaveProperty("lifecycle");
    // And the socket is subscribed again: new output arrives live.
    second.dispatch("ahp-terminal:/rc-keep", { type: "terminal/input", data: "echo live-again\r" });
    await second.waitForOutput("ahp-terminal:/rc-keep", /live-again\r\n/);
    second.close();
  });

  it("falls back to snapshots when the buffer no longer reaches back far enough", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { clientId: "rc-2" });
    await client.call("createTerminal", { channel: "ahp-terminal:/rc-flood" });
    client.dispatch("ahp-terminal:/rc-flood", { type: "terminal/input", data: "head -c 6000000 /dev/zero | tr '\\0' y; echo; echo flood-$((1+1))\r" });
    await client.call("subscribe", { channel: "ahp-terminal:/rc-flood" });
    await client.waitForOutput("ahp-terminal:/rc-flood", /flood-2\r\n/, 60_000);
    client.close();
    const again = await AhpTestClient.connect(gateway.url);
    const result = await again.call("reconnect", { clientId: "rc-2", lastSeenServerSeq: 1, subscriptions: ["ahp-terminal:/rc-flood"] });
    expect(result.type).toBe("snapshot");
    expect(result.snapshots[0].resource).toBe("ahp-terminal:/rc-flood");
    again.close();
  }, 90_000);

  it("answers an unknown clientId with -32008 (what VS Code falls back to initialize on) and keeps the socket for that initialize", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    const failure = await client.call("reconnect", { clientId: "never-seen", lastSeenServerSeq: 0, subscriptions: [] }).catch((err: RpcFailure) => err);
    expect(failure.error).toMatchObject({ code: -32008, message: expect.stringContaining("send initialize") });
    expect(await client.call("initialize", init("never-seen", ["0.6.0"]))).toHaveProperty("protocolVersion", "0.6.0");
    client.close();
  });
});
