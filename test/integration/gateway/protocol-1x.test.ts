import { describe, expect, it } from "vitest";
import { AhpTestClient, contentText, rpcErrorOf } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { useTestGateway } from "./harness.js";

const gateway = useTestGateway();

let counter = 0;
const fresh = (): string => `ahp-terminal:/v1-${++counter}`;
const init = (clientId: string, protocolVersions: unknown[], initialSubscriptions: string[] = []) => ({ channel: "ahp-root://", protocolVersions, clientId, initialSubscriptions });
const RECEIVE = { windowBytes: 65536, maximumFrameBytes: 16384, maximumMessageBytes: 4194304 };

describe("negotiating 1.x", () => {
  it("accepts any 0.9.x or 1.y.z offer and VS Code's 0.10.0, picking the highest, returned exactly as offered", async () => {
    const cases: Array<[string[], string]> = [
      [["1.1.0"], "1.1.0"],
      [["0.9.1"], "0.9.1"],
      [["0.10.0"], "0.10.0"],
      [["0.9.0", "1.5.0", "1.0.0"], "1.5.0"],
      [["0.6.0", "0.10.0", "0.9.0"], "0.10.0"],
    ];
    for (const [offer, expected] of cases) {
      const client = await AhpTestClient.connect(gateway.url);
      expect((await client.call("initialize", init(`n-${expected}`, offer))).protocolVersion).toBe(expected);
      client.close();
    }
  });

  it("answers a malformed offer with -32602 even beside a valid one, and keeps the socket for a good offer", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    for (const bad of ["0.9", "01.0.0", "1.0.0-beta"]) {
      expect(await rpcErrorOf(client.call("initialize", init("malformed", ["1.0.0", bad])))).toMatchObject({ code: -32602, message: expect.stringContaining(bad) });
    }
    expect((await client.call("initialize", init("malformed", ["1.0.0"]))).protocolVersion).toBe("1.0.0");
    client.close();
  });

  it("remembers the exact negotiated version for reconnect: windows need 1.1, so 1.0.9 declines them and 1.5.0 accepts", async () => {
    const uri = fresh();
    const creator = await AhpTestClient.initialized(gateway.url, { versions: ["1.1.0"] });
    await creator.call("createTerminal", { channel: uri });
    for (const [version, windowed] of [["1.0.9", false], ["1.5.0", true]] as const) {
      const first = await AhpTestClient.connect(gateway.url);
      const { serverSeq } = await first.call("initialize", init(`exact-${version}`, [version]));
      first.close();
      await first.closed();
      const again = await AhpTestClient.connect(gateway.url);
      await again.call("reconnect", { clientId: `exact-${version}`, lastSeenServerSeq: serverSeq, subscriptions: [] });
      const result = await again.subscribeWindowed(uri, RECEIVE);
      expect("flowControl" in result).toBe(windowed);
      expect("snapshot" in result).toBe(!windowed);
      if (!windowed) expect(result.snapshot.state.lifecycle).toEqual({ status: "running" });
      again.close();
    }
    creator.close();
  });
});

describe("authenticate.expiresIn (1.0)", () => {
  it("lapses the sign-in: auth/required with reason expired, the next request -32007, and nothing more of the terminals it read", async () => {
    const uri = fresh();
    const watcher = await AhpTestClient.initialized(gateway.url, { versions: ["0.9.0"] });
    await watcher.call("createTerminal", { channel: uri });
    await watcher.call("subscribe", { channel: uri });
    const client = await AhpTestClient.initialized(gateway.url, { versions: ["1.0.0"], subscribe: ["ahp-root://"] });
    expect(await client.call("authenticate", { channel: "ahp-root://", resource: "ahp-terminal-gateway", token: gateway.token, expiresIn: 1 })).toEqual({});
    await client.call("subscribe", { channel: uri });
    watcher.dispatch(uri, { type: "terminal/input", data: "echo before-$((1+1))\r" });
    await client.waitForOutput(uri, /before-2\r\n/);

    const required = (await client.waitFor((frame: any) => frame.method === "auth/required", 5_000)) as { params: Record<string, any> };
    expect(required.params).toEqual({ channel: "ahp-root://", resource: expect.objectContaining({ resource: "ahp-terminal-gateway", required: true }), reason: "expired" });
    expect((await rpcErrorOf(client.call("createTerminal", { channel: fresh() }))).code).toBe(-32007);
    const seen = client.envelopes().filter((envelope) => envelope.channel === uri).length;
    watcher.dispatch(uri, { type: "terminal/input", data: "echo after-$((2+2))\r" });
    await watcher.waitForOutput(uri, /after-4\r\n/);
    // The root list still reaches it (anyone may read it); the terminal does not.
    const lists = () => client.envelopes().filter((envelope) => envelope.action.type === "root/terminalsChanged").length;
    const listsBefore = lists();
    await watcher.call("createTerminal", { channel: fresh() });
    expect(await eventually(() => lists() > listsBefore)).toBe(true);
    expect(client.envelopes().filter((envelope) => envelope.channel === uri).length).toBe(seen);
    // Signing in again works as before.
    await client.call("authenticate", { channel: "ahp-root://", resource: "ahp-terminal-gateway", token: gateway.token });
    expect(contentText((await client.call("subscribe", { channel: uri })).snapshot.state)).toContain("after-4");
    for (const socket of [client, watcher]) socket.close();
  });

  it("is tolerated and ignored before 1.0, and must be a positive number of seconds from 1.0", async () => {
    const old = await AhpTestClient.initialized(gateway.url, { versions: ["0.9.0"] });
    await old.call("authenticate", { resource: "ahp-terminal-gateway", token: gateway.token, expiresIn: -5 });
    const current = await AhpTestClient.initialized(gateway.url, { versions: ["1.0.0"] });
    for (const bad of [0, -1, "60", null]) {
      expect((await rpcErrorOf(current.call("authenticate", { resource: "ahp-terminal-gateway", token: gateway.token, expiresIn: bad }))).code).toBe(-32602);
    }
    for (const socket of [old, current]) socket.close();
  });
});

describe("released terminals (1.0)", () => {
  it("answer a 1.0 subscribe with their exited state and output, while older versions keep -32008", async () => {
    const [ended, killed] = [fresh(), fresh()];
    const client = await AhpTestClient.initialized(gateway.url, { versions: ["1.0.0"] });
    for (const uri of [ended, killed]) {
      await client.call("createTerminal", { channel: uri, name: "kept" });
      await client.call("subscribe", { channel: uri });
      client.dispatch(uri, { type: "terminal/input", data: "echo hist-$((2+3))\r" });
      await client.waitForOutput(uri, /hist-5\r\n/);
    }
    client.dispatch(ended, { type: "terminal/input", data: "exit 4\r" });
    await client.waitForEnvelope((envelope) => envelope.channel === ended && envelope.action.type === "terminal/exited");
    for (const uri of [ended, killed]) await client.call("disposeTerminal", { channel: uri });

    const { snapshot } = await client.call("subscribe", { channel: ended });
    expect(snapshot.state).toMatchObject({ title: "kept", lifecycle: { status: "exited", exitCode: 4 } });
    expect(contentText(snapshot.state)).toMatch(/hist-5\r\n/);
    expect((await client.call("subscribe", { channel: killed })).snapshot.state.lifecycle.status).toBe("exited");
    const later = await AhpTestClient.connect(gateway.url);
    const { snapshots } = await later.call("initialize", init("hist-later", ["1.1.0"], ["ahp-root://", ended]));
    expect(snapshots.map((s: { resource: string }) => s.resource)).toEqual(["ahp-root://", ended]);
    expect(snapshots[0].state.terminals.some((row: { resource: string }) => row.resource === ended)).toBe(false);

    const old = await AhpTestClient.initialized(gateway.url, { versions: ["0.9.0"] });
    expect((await rpcErrorOf(old.call("subscribe", { channel: ended }))).code).toBe(-32008);
    // The URI can be used again; the live terminal replaces the record.
    await client.call("createTerminal", { channel: ended });
    expect((await client.call("subscribe", { channel: ended })).snapshot.state.lifecycle).toEqual({ status: "running" });
    await client.call("disposeTerminal", { channel: ended });
    for (const socket of [client, later, old]) socket.close();
  });
});
