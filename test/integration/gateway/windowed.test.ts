import { describe, expect, it } from "vitest";
import { terminalReducer } from "../../../ahp/terminal-reducer.js";
import type { TerminalState } from "../../../ahp/types.js";
import { AhpTestClient, contentText, rpcErrorOf } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { useTestGateway } from "./harness.js";

const gateway = useTestGateway();

let counter = 0;
const fresh = (): string => `ahp-terminal:/w-${++counter}`;
const RECEIVE = { windowBytes: 65536, maximumFrameBytes: 4096, maximumMessageBytes: 4194304 };

async function windowedClient(clientId = `w-${Math.random().toString(36).slice(2)}`): Promise<AhpTestClient> {
  return AhpTestClient.initialized(gateway.url, { clientId, versions: ["1.1.0"], subscribe: ["ahp-root://"] });
}

/** What reached the client on a windowed channel, in order: the messages it reassembled and the controls between them. */
function framedOn(client: AhpTestClient, channel: string): Array<{ method: string; params: any }> {
  return (client.frames as Array<{ method: string; params: any }>).filter(
    (frame) => (client.framed.has(frame) || frame.method === "channel/ready" || frame.method === "channel/reset") && frame.params.channel === channel,
  );
}

/** The terminal's state as the client rebuilds it from its framed messages: the last snapshot and every envelope after it. */
function mirrored(client: AhpTestClient, channel: string): TerminalState {
  let state: TerminalState | undefined;
  let from = 0;
  for (const message of framedOn(client, channel)) {
    if (message.method === "channel/snapshot") [state, from] = [message.params.snapshot.state, message.params.snapshot.fromSeq];
    else if (message.method === "action" && state && message.params.serverSeq > from && !message.params.rejectionReason) state = terminalReducer(state, message.params.action);
  }
  return state!;
}

describe("subscribing with flowControl", () => {
  it("is accepted from 1.1 with limits lowered to the gateway's maxima and no inline snapshot; declined below 1.1; refused when malformed", async () => {
    const uri = fresh();
    const client = await windowedClient();
    await client.call("createTerminal", { channel: uri });
    const accepted = await client.subscribeWindowed(uri, { windowBytes: 100 * 1024 * 1024, maximumFrameBytes: 10 * 1024 * 1024, maximumMessageBytes: 2 ** 40 });
    expect(accepted).toEqual({
      flowControl: {
        clientReceive: { windowBytes: 2 * 1024 * 1024, maximumFrameBytes: 256 * 1024, maximumMessageBytes: 64 * 1024 * 1024 },
        hostReceive: { windowBytes: 1024 * 1024, maximumFrameBytes: 64 * 1024, maximumMessageBytes: 8 * 1024 * 1024 },
      },
    });
    expect((await client.subscribeWindowed(uri, RECEIVE)).flowControl.clientReceive).toEqual(RECEIVE);
    for (const version of ["1.0.0", "0.9.0"]) {
      const older = await AhpTestClient.initialized(gateway.url, { versions: [version] });
      const declined = await older.subscribeWindowed(uri, RECEIVE);
      expect(declined).not.toHaveProperty("flowControl");
      expect(declined.snapshot.resource).toBe(uri);
      older.close();
    }
    for (const receive of [{ ...RECEIVE, windowBytes: 0 }, { ...RECEIVE, maximumFrameBytes: 1.5 }, { ...RECEIVE, maximumFrameBytes: 100 }, undefined]) {
      expect((await rpcErrorOf(client.subscribeWindowed(uri, receive as never))).code).toBe(-32602);
    }
    client.close();
  });

  it("sends the snapshot, channel/ready, then live envelopes (echoes and refusals too) in frames within the limits, and nothing of that channel unframed", async () => {
    const uri = fresh();
    const client = await windowedClient();
    await client.call("createTerminal", { channel: uri, name: "windowed" });
    await client.subscribeWindowed(uri, RECEIVE);
    const input = client.dispatch(uri, { type: "terminal/input", data: "echo framed-$((6*7)) 😀\r" });
    await client.waitForOutput(uri, /framed-42 😀\r\n/);
    const refused = client.dispatch(uri, { type: "terminal/data", data: "forged" });
    await client.waitForEnvelope((envelope) => envelope.origin?.clientSeq === refused);
    const messages = framedOn(client, uri);
    expect(messages.slice(0, 2).map((message) => message.method)).toEqual(["channel/snapshot", "channel/ready"]);
    expect(messages[0]!.params.snapshot.state).toMatchObject({ title: "windowed", lifecycle: { status: "running" } });
    expect(messages.some((message) => message.method === "action" && message.params.origin?.clientSeq === input && message.params.action.type === "terminal/input")).toBe(true);
    expect(messages.some((message) => message.method === "action" && message.params.rejectionReason)).toBe(true);
    const outer = client.frames as Array<{ method?: string; params?: any }>;
    expect(outer.filter((frame) => !client.framed.has(frame) && frame.method === "action" && frame.params.channel === uri)).toEqual([]);
    expect(outer.some((frame) => !client.framed.has(frame) && frame.method === "action" && frame.params.channel === "ahp-root://")).toBe(true);
    expect(client.deliveryErrors).toEqual([]);
    const reader = await AhpTestClient.initialized(gateway.url);
    const current = async (): Promise<string> => contentText((await reader.call("subscribe", { channel: uri })).snapshot.state);
    expect(await eventually(async () => contentText(mirrored(client, uri)) === (await current()))).toBe(true);
    for (const socket of [client, reader]) socket.close();
  });

  it("resets a channel whose credit names bytes never sent, and stops when the client resets it", async () => {
    const [uri, other] = [fresh(), fresh()];
    const client = await windowedClient();
    for (const channel of [uri, other]) {
      await client.call("createTerminal", { channel });
      await client.subscribeWindowed(channel, RECEIVE);
    }
    await client.waitFor((frame: any) => frame.method === "channel/ready" && frame.params.channel === other);
    client.notify("channel/credit", { channel: uri, consumedBytes: 123_456_789 });
    await client.waitFor((frame: any) => frame.method === "channel/reset" && frame.params.channel === uri);
    expect(await eventually(() => gateway.gateway.store.channels.subscriberCount(uri) === 0)).toBe(true);
    client.notify("channel/reset", { channel: other });
    expect(await eventually(() => gateway.gateway.store.channels.subscriberCount(other) === 0)).toBe(true);
    client.close();
  });

  it("takes a large dispatchAction framed within hostReceive and returns its credit", async () => {
    const uri = fresh();
    const client = await windowedClient();
    await client.call("createTerminal", { channel: uri });
    await client.subscribeWindowed(uri, RECEIVE);
    client.dispatch(uri, { type: "terminal/input", data: `echo ${"x".repeat(3000)} | wc -c\r` }, { framed: true });
    await client.waitForOutput(uri, /\r\n *3001\r\n/);
    expect(await eventually(() => client.windowStats(uri)!.sentOutstanding === 0)).toBe(true);
    client.close();
  });
});

describe("a client's maximumMessageBytes", () => {
  for (const maximumMessageBytes of [6_000, 65_536]) {
    it(`shapes delivery at ${maximumMessageBytes} bytes under seq and yes floods: output cut to fit, every byte in order, no reset`, async () => {
      const uri = fresh();
      const client = await windowedClient();
      await client.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "read go; seq 1 60000; yes 0123456789 | head -c 1000000; echo; yes \"$(printf '\\033[m')\" | head -c 400000; echo END-OF-FLOOD; sleep 30"] } });
      await client.subscribeWindowed(uri, { windowBytes: 65_536, maximumFrameBytes: 4_096, maximumMessageBytes });
      await client.waitFor((frame: any) => frame.method === "channel/ready" && frame.params.channel === uri);
      client.dispatch(uri, { type: "terminal/input", data: "go\r" });
      await client.waitForOutput(uri, /END-OF-FLOOD\r\n/, 60_000);
      const messages = framedOn(client, uri);
      expect(messages.filter((message) => message.method === "channel/reset")).toEqual([]);
      expect(client.deliveryErrors).toEqual([]);
      const data = messages.filter((m) => m.method === "action" && m.params.action.type === "terminal/data");
      for (const message of data) expect(JSON.stringify(message).length * 2).toBeLessThanOrEqual(maximumMessageBytes);
      const output = data.map((m) => m.params.action.data as string).join("");
      const lines = output.slice(output.indexOf("go\r\n") + 4).split("\r\n");
      expect(lines.slice(0, 60_000)).toEqual(Array.from({ length: 60_000 }, (_, i) => String(i + 1)));
      const [digits, escapes] = [lines.slice(60_000, 150_910), lines.slice(150_910, lines.indexOf("END-OF-FLOOD"))];
      expect(digits.join("\r\n")).toBe(`${"0123456789\r\n".repeat(90_909)}0`);
      // Escape characters grow sixfold in JSON (\u001b): the messages that carry them are cut the most.
      expect(escapes.join("\r\n")).toBe(`${"\u001b[m\r\n".repeat(100_000)}`.replace(/\r\n$/, ""));
      client.close();
    }, 90_000);
  }

  it("too small to carry output on the channel is refused at subscribe", async () => {
    const uri = fresh();
    const client = await windowedClient();
    await client.call("createTerminal", { channel: uri });
    expect(await rpcErrorOf(client.subscribeWindowed(uri, { ...RECEIVE, maximumMessageBytes: 200 }))).toMatchObject({ code: -32602, message: expect.stringMatching(/maximumMessageBytes 200 cannot carry output on this channel/) });
    client.close();
  });
});

describe("a windowed channel that stops", () => {
  it("is reset when the sign-in lapses, and when its terminal is disposed of", async () => {
    const [lapsing, disposed] = [fresh(), fresh()];
    const client = await windowedClient();
    for (const uri of [lapsing, disposed]) {
      await client.call("createTerminal", { channel: uri });
      await client.subscribeWindowed(uri, RECEIVE);
      await client.waitFor((frame: any) => frame.method === "channel/ready" && frame.params.channel === uri);
    }
    await client.call("disposeTerminal", { channel: disposed });
    await client.waitFor((frame: any) => frame.method === "channel/reset" && frame.params.channel === disposed);
    await client.call("authenticate", { resource: "ahp-terminal-gateway", token: gateway.token, expiresIn: 1 });
    await client.waitFor((frame: any) => frame.method === "auth/required", 3_000);
    await client.waitFor((frame: any) => frame.method === "channel/reset" && frame.params.channel === lapsing);
    expect(await eventually(() => gateway.gateway.store.channels.subscriberCount(lapsing) === 0)).toBe(true);
    client.close();
  });
});

describe("reconnect with windows", () => {
  it("resumes each window by replay after its checkpoint or by snapshot, outside the inline actions, with fresh limits", async () => {
    const [replayed, snapshotted, plain] = [fresh(), fresh(), fresh()];
    const first = await windowedClient("rw-1");
    for (const uri of [replayed, snapshotted, plain]) await first.call("createTerminal", { channel: uri });
    await first.subscribeWindowed(replayed, RECEIVE);
    await first.subscribeWindowed(snapshotted, RECEIVE);
    await first.call("subscribe", { channel: plain });
    first.dispatch(replayed, { type: "terminal/input", data: "echo one-$((1+1))\r" });
    await first.waitForOutput(replayed, /one-2\r\n/);
    const checkpoint = Math.max(...framedOn(first, replayed).filter((m) => m.method === "action").map((m) => m.params.serverSeq));
    const lastSeen = first.lastSeenServerSeq;
    first.close();
    await first.closed();
    const watcher = await AhpTestClient.initialized(gateway.url);
    await watcher.call("subscribe", { channel: replayed });
    const writer = await windowedClient();
    for (const uri of [replayed, plain]) writer.dispatch(uri, { type: "terminal/input", data: "echo two-$((2+2))\r" });
    await watcher.waitForOutput(replayed, /two-4\r\n/);

    const again = await AhpTestClient.connect(gateway.url);
    const result = await again.reconnect({
      clientId: "rw-1",
      lastSeenServerSeq: lastSeen,
      subscriptions: ["ahp-root://", replayed, snapshotted, plain, "ahp-terminal:/never-windowed"],
      windows: { items: [{ channel: replayed, lastAppliedServerSeq: checkpoint }, { channel: snapshotted }, { channel: "ahp-terminal:/never-windowed" }] },
    });
    expect(result.windows.items.map((item: any) => [item.channel, item.recovery])).toEqual([
      [replayed, "replay"],
      [snapshotted, "snapshot"],
    ]);
    expect(result.windows.items[0].flowControl.clientReceive).toEqual(RECEIVE);
    const inline = result.type === "replay" ? result.actions.map((e: any) => e.channel) : result.snapshots.map((s: any) => s.resource);
    expect(inline).not.toContain(replayed);
    expect(inline).not.toContain(snapshotted);
    await again.waitFor((frame: any) => frame.method === "channel/ready" && frame.params.channel === replayed);
    const resumed = framedOn(again, replayed);
    expect(resumed.every((m) => m.method !== "action" || m.params.serverSeq > checkpoint)).toBe(true);
    expect(resumed.filter((m) => m.method === "action" && m.params.action.type === "terminal/data").map((m) => m.params.action.data).join("")).toMatch(/two-4\r\n/);
    await again.waitFor((frame: any) => frame.method === "channel/snapshot" && frame.params.channel === snapshotted);
    expect(again.deliveryErrors).toEqual([]);
    const ordinary = await AhpTestClient.connect(gateway.url);
    const withoutWindows = await ordinary.reconnect({ clientId: "rw-1", lastSeenServerSeq: lastSeen, subscriptions: [plain] });
    expect(withoutWindows).not.toHaveProperty("windows");
    for (const socket of [again, writer, watcher, ordinary]) socket.close();
  });

  it("never executes a replayed input twice: the retry of an input already accepted gets its first echo again", async () => {
    const uri = fresh();
    const first = await windowedClient("retry-1");
    await first.call("createTerminal", { channel: uri });
    await first.subscribeWindowed(uri, RECEIVE);
    const input = { type: "terminal/input", data: "echo ran-$((20+1))\r" };
    first.dispatch(uri, input, { clientSeq: 77 });
    const echo = await first.waitForEnvelope((envelope) => envelope.origin?.clientSeq === 77);
    await first.waitForOutput(uri, /ran-21\r\n/);
    const lastSeen = first.lastSeenServerSeq;
    first.close();
    await first.closed();

    const again = await AhpTestClient.connect(gateway.url);
    await again.reconnect({ clientId: "retry-1", lastSeenServerSeq: lastSeen, subscriptions: [uri], windows: { items: [{ channel: uri }] } });
    await again.waitFor((frame: any) => frame.method === "channel/ready" && frame.params.channel === uri);
    again.dispatch(uri, input, { clientSeq: 77 });
    const retried = await again.waitForEnvelope((envelope) => envelope.origin?.clientSeq === 77);
    expect(retried.serverSeq).toBe(echo.serverSeq);
    again.dispatch(uri, { type: "terminal/input", data: "echo marker-$((1+1))\r" });
    await again.waitForOutput(uri, /marker-2\r\n/);
    const text = contentText((await again.call("subscribe", { channel: uri })).snapshot.state);
    expect(text.match(/ran-21\r\n/g)).toHaveLength(1);
    again.close();
  });
});
