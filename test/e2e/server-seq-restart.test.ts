import { describe, expect, it } from "vitest";
import { AhpTestClient, contentText, rpcErrorOf } from "../support/ahp-test-client.js";
import { useRestartableGateway } from "./gateway-restarts.js";

const services = useRestartableGateway();

const uri = "ahp-terminal:/seq-continuity";
const initialize = (client: AhpTestClient, subscriptions: string[]) =>
  client.call("initialize", { channel: "ahp-root://", protocolVersions: ["1.1.0"], clientId: "keeper", initialSubscriptions: subscriptions });

describe("serverSeq across a gateway restart, as the official client reconnects", () => {
  it("never reissues an earlier gateway's numbers, and answers one of them with snapshots, never a replay", async () => {
    const first = await AhpTestClient.connect(services.url);
    await initialize(first, ["ahp-root://"]);
    await first.call("createTerminal", { channel: uri });
    await first.call("subscribe", { channel: uri });
    for (let i = 1; i <= 30; i++) first.dispatch(uri, { type: "terminal/input", data: `echo before-${i}\r` });
    await first.waitForOutput(uri, /before-30\r\n/);
    const highestBefore = first.lastSeenServerSeq;
    first.close();

    await services.restart();
    // The client keeps the highest serverSeq it ever saw; the new gateway does not know it, so it falls back to initialize.
    const second = await AhpTestClient.connect(services.url);
    second.sawServerSeq(highestBefore);
    expect((await rpcErrorOf(second.reconnect({ clientId: "keeper", lastSeenServerSeq: second.lastSeenServerSeq, subscriptions: [uri] }))).code).toBe(-32008);
    const { serverSeq, snapshots } = await initialize(second, ["ahp-root://", uri]);
    expect(serverSeq).toBeGreaterThan(highestBefore);
    expect(contentText(snapshots[1].state)).toContain("before-30\r\n");
    second.sawServerSeq(serverSeq);
    second.dispatch(uri, { type: "terminal/input", data: "echo during-$((1+1))\r" });
    await second.waitForOutput(uri, /during-2\r\n/);
    const kept = second.lastSeenServerSeq;
    second.close();
    await second.closed();

    // While the client is away, the terminal goes on; reconnecting with the highest seq it kept replays all of it.
    const other = await AhpTestClient.initialized(services.url, { versions: ["0.9.0"] });
    await other.call("subscribe", { channel: uri });
    for (let i = 1; i <= 20; i++) other.dispatch(uri, { type: "terminal/input", data: `echo away-${i}\r` });
    await other.waitForOutput(uri, /away-20\r\n/);
    const third = await AhpTestClient.connect(services.url);
    third.sawServerSeq(kept);
    const resumed = await third.reconnect({ clientId: "keeper", lastSeenServerSeq: third.lastSeenServerSeq, subscriptions: ["ahp-root://", uri] });
    expect(resumed.type).toBe("replay");
    expect(resumed.actions.every((envelope: { serverSeq: number }) => envelope.serverSeq > kept)).toBe(true);
    const replayed = resumed.actions.filter((e: any) => e.channel === uri && e.action.type === "terminal/data").map((e: any) => e.action.data).join("");
    for (let i = 1; i <= 20; i++) expect(replayed).toContain(`away-${i}\r\n`);

    // A position the earlier gateway issued is not one this one can vouch for: snapshots, whatever the buffer holds.
    const stale = await AhpTestClient.connect(services.url);
    const fromEarlier = await stale.reconnect({ clientId: "keeper", lastSeenServerSeq: highestBefore, subscriptions: [uri] });
    expect(fromEarlier.type).toBe("snapshot");
    expect(contentText(fromEarlier.snapshots[0].state)).toContain("away-20\r\n");
    for (const socket of [third, other, stale]) socket.close();
  }, 60_000);
});
