import { describe, expect, it } from "vitest";
import { terminalReducer } from "../../../ahp/terminal-reducer.js";
import { AhpTestClient, contentText } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { useTestGateway } from "./harness.js";

const gateway = useTestGateway();

describe("output to clients that cannot keep up", () => {
  it("holds a flood back for a client that stops reading, closes it with 1013, and keeps serving a client that reads", async () => {
    const uri = "ahp-terminal:/flood";
    const stuck = await AhpTestClient.initialized(gateway.url, { clientId: "stuck" });
    const reader = await AhpTestClient.initialized(gateway.url, { clientId: "reader" });
    await stuck.call("createTerminal", { channel: uri });
    await stuck.call("subscribe", { channel: uri });
    await reader.call("subscribe", { channel: uri });
    // The stuck client stops reading its socket: the kernel's buffers fill, then the gateway's.
    (stuck.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    reader.dispatch(uri, { type: "terminal/input", data: "yes flood-line\r" });
    // Staying above its bound for 10 s gets the stuck client dropped; the reader is the only subscriber left.
    expect(await eventually(() => gateway.gateway.store.channels.subscriberCount(uri) === 1, 25_000)).toBe(true);
    (stuck.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    // It sees 1013 if the closing frame got out before the connection was dropped, 1006 otherwise.
    expect([1013, 1006]).toContain(await stuck.closed(10_000));
    // The reader kept receiving all along.
    expect(reader.outputOf(uri).length).toBeGreaterThan(8 * 1024 * 1024);
    reader.dispatch(uri, { type: "terminal/input", data: "\u0003" });
    await reader.waitForOutput(uri, /\^C/, 10_000, 4096);
    // The closed client can come back and gets a snapshot.
    const back = await AhpTestClient.connect(gateway.url);
    const result = await back.call("reconnect", { clientId: "stuck", lastSeenServerSeq: 1, subscriptions: [uri] });
    expect(["replay", "snapshot"]).toContain(result.type);
    for (const client of [reader, back]) client.close();
  }, 60_000);

  it("batches output for a subscriber that asked for delivery.maxLatencyMs, with the same result once reduced", async () => {
    const uri = "ahp-terminal:/batched";
    const client = await AhpTestClient.initialized(gateway.url);
    await client.call("createTerminal", { channel: uri });
    const { snapshot } = await client.call("subscribe", { channel: uri, delivery: { maxLatencyMs: 200 } });
    client.dispatch(uri, { type: "terminal/input", data: "for i in 1 2 3 4 5 6 7 8 9 10; do echo line-$i; sleep 0.01; done; echo done-$((1+1))\r" });
    await client.waitForOutput(uri, /done-2\r\n/);
    const dataFrames = client.envelopes().filter((e) => e.channel === uri && e.action.type === "terminal/data");
    expect(dataFrames.length).toBeLessThan(8);
    let mirror = snapshot.state;
    for (const envelope of client.envelopes()) if (envelope.channel === uri && envelope.serverSeq > snapshot.fromSeq) mirror = terminalReducer(mirror, envelope.action);
    expect(await eventually(async () => contentText(mirror) === contentText((await client.call("subscribe", { channel: uri })).snapshot.state))).toBe(true);
    client.close();
  });
});
