import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AhpTestClient, contentText, rpcErrorOf } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { startTestRunner, type TestRunner } from "../runner/harness.js";
import { FRESH_FOLLOW_GRACE_MS } from "../../../gateway/terminals/terminal-follow.js";
import { startGatewayOn, type TestGateway } from "./harness.js";

/** How long an unread terminal stays followed in these gateways: short, so letting go is seen within the test. */
const GRACE_MS = 300;

let runners: TestRunner[] = [];
let gateways: TestGateway[] = [];
let counter = 0;
const fresh = (): string => `ahp-terminal:/replica-${process.pid}-${++counter}`;

beforeAll(async () => {
  const home = mkdtempSync(join(tmpdir(), "replicas-home-"));
  const env = { ...process.env, SHELL: "/bin/sh", HOME: home, ENV: "", PS1: "$ " };
  runners = await Promise.all([0, 1].map(() => startTestRunner({ env })));
  gateways = await Promise.all([0, 1, 2].map(() => startGatewayOn(runners, home, { followGraceMs: GRACE_MS })));
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.gateway.close();
  for (const runner of runners) await runner.close();
});

const rowOf = (client: AhpTestClient, uri: string) => async (): Promise<any> => (await client.call("subscribe", { channel: "ahp-root://" })).snapshot.state.terminals.find((row: any) => row.resource === uri);

describe("three gateways over the same two runners", () => {
  it("list a terminal created through any of them, serve it whole, and carry input from each to the same process in order", async () => {
    const [one, two, three] = await Promise.all(gateways.map((gateway) => AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] })));
    const uri = fresh();
    await one!.call("createTerminal", { channel: uri, name: "shared" });
    await two!.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes(uri), 5_000);
    await three!.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes(uri), 5_000);
    one!.dispatch(uri, { type: "terminal/input", data: "echo before-$((40+2))\r" });
    await one!.subscribeUntil(uri, /before-42\r\n/);
    // A gateway that never followed it serves everything the terminal wrote.
    await two!.subscribeUntil(uri, /before-42\r\n/);
    await three!.call("subscribe", { channel: uri });
    for (const [i, client] of [one!, two!, three!, one!, two!, three!].entries()) {
      client.dispatch(uri, { type: "terminal/input", data: `echo turn-${i}\r` });
      await client.waitForOutput(uri, new RegExp(`\\nturn-${i}\\r\\n`));
    }
    for (const client of [one!, two!, three!]) {
      await client.waitForOutput(uri, /\nturn-5\r\n/);
      const text = contentText((await client.call("subscribe", { channel: uri })).snapshot.state);
      const turns = [...text.matchAll(/\nturn-(\d)\r\n/g)].map((match) => Number(match[1]));
      expect(turns).toEqual([0, 1, 2, 3, 4, 5]);
      expect(text).toContain("before-42\r\n");
    }
    // Disposed through one, gone from the others.
    await three!.call("disposeTerminal", { channel: uri });
    expect(await eventually(async () => (await rowOf(one!, uri)()) === undefined, 5_000)).toBe(true);
    expect(await eventually(async () => (await rowOf(two!, uri)()) === undefined, 5_000)).toBe(true);
    for (const client of [one!, two!, three!]) client.close();
  });

  it("follow a terminal's output only while someone reads it through them", async () => {
    const [one, two] = await Promise.all(gateways.slice(0, 2).map((gateway) => AhpTestClient.initialized(gateway.url)));
    const [first, second] = [gateways[0]!.gateway.terminals, gateways[1]!.gateway.terminals];
    const uri = fresh();
    await one!.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "while :; do echo flood; sleep 0.01; done"] } });
    expect(await eventually(() => second.linkAt(uri) !== undefined, 5_000)).toBe(true);
    // Nobody reads it: neither gateway follows it (the creator lets go after the grace).
    expect(await eventually(() => first.linkAt(uri)?.follow.active === false, 5_000)).toBe(true);
    expect(second.linkAt(uri)!.follow.active).toBe(false);
    await two!.subscribeUntil(uri, /flood\r\n/);
    expect(second.linkAt(uri)!.follow.active).toBe(true);
    expect(first.linkAt(uri)!.follow.active).toBe(false);
    two!.notify("unsubscribe", { channel: uri });
    expect(await eventually(() => second.linkAt(uri)!.follow.active === false, 5_000)).toBe(true);
    // Its content is dropped meanwhile; reading it again rebuilds it from the runner, the old output included.
    expect(gateways[1]!.gateway.store.terminalState(uri)!.content).toEqual([]);
    const again = contentText((await two!.call("subscribe", { channel: uri })).snapshot.state);
    expect(again.split("flood\r\n").length).toBeGreaterThan(5);
    await one!.call("disposeTerminal", { channel: uri });
    for (const client of [one!, two!]) client.close();
  });

  it("apply exactly one of two conflicting claim hand-overs or renames made through different gateways, and show the winner everywhere", async () => {
    // One client id on two gateways (as a client that moved would be), holding the terminal.
    const holderOne = await AhpTestClient.initialized(gateways[0]!.url, { clientId: "holder" });
    const holderTwo = await AhpTestClient.initialized(gateways[1]!.url, { clientId: "holder" });
    const watcher = await AhpTestClient.initialized(gateways[2]!.url, { subscribe: ["ahp-root://"] });
    for (let round = 0; round < 5; round++) {
      const uri = fresh();
      await holderOne.call("createTerminal", { channel: uri });
      expect(await eventually(() => gateways[1]!.gateway.store.isTerminal(uri), 5_000)).toBe(true);
      for (const client of [holderOne, holderTwo]) await client.call("subscribe", { channel: uri });
      // Each socket hears of its own action (accepted or refused) with its origin; the other gateway's change reaches it without one.
      const mine = (client: AhpTestClient, seq: number) => client.waitForEnvelope((e) => e.channel === uri && e.origin?.clientId === "holder" && e.origin.clientSeq === seq, 5_000);
      const toAna = holderOne.dispatch(uri, { type: "terminal/claimed", claim: { kind: "client", clientId: "ana" } });
      const toBen = holderTwo.dispatch(uri, { type: "terminal/claimed", claim: { kind: "client", clientId: "ben" } });
      const [a, b] = await Promise.all([mine(holderOne, toAna), mine(holderTwo, toBen)]);
      const refused = [a, b].filter((envelope) => envelope.rejectionReason !== undefined);
      expect(refused).toHaveLength(1);
      expect(refused[0]!.rejectionReason).toMatch(/held by client (ana|ben); only the holder can hand it over/);
      const winner = a.rejectionReason === undefined ? "ana" : "ben";
      for (const client of [holderOne, holderTwo]) {
        expect(await eventually(async () => (await client.call("subscribe", { channel: uri })).snapshot.state.claim.clientId === winner, 5_000)).toBe(true);
      }
      expect(await eventually(async () => (await rowOf(watcher, uri)())?.claim.clientId === winner, 5_000)).toBe(true);

      const renameOne = holderOne.dispatch(uri, { type: "terminal/titleChanged", title: "from one" });
      const renameTwo = holderTwo.dispatch(uri, { type: "terminal/titleChanged", title: "from two" });
      const [r1, r2] = await Promise.all([mine(holderOne, renameOne), mine(holderTwo, renameTwo)]);
      expect([r1, r2].filter((envelope) => envelope.rejectionReason !== undefined)).toHaveLength(1);
      const title = r1.rejectionReason === undefined ? "from one" : "from two";
      expect([r1, r2].find((envelope) => envelope.rejectionReason)!.rejectionReason).toMatch(/another client renamed the terminal first/);
      expect(await eventually(async () => (await rowOf(watcher, uri)())?.title === title, 5_000)).toBe(true);
      for (const client of [holderOne, holderTwo]) {
        expect(await eventually(async () => (await client.call("subscribe", { channel: uri })).snapshot.state.title === title, 5_000)).toBe(true);
      }
      await holderOne.call("disposeTerminal", { channel: uri });
    }
    for (const client of [holderOne, holderTwo, watcher]) client.close();
  });

  it("create a URI once when two gateways create it at the same moment", async () => {
    const clients = await Promise.all(gateways.map((gateway) => AhpTestClient.initialized(gateway.url)));
    for (let round = 0; round < 5; round++) {
      const uri = fresh();
      const outcomes = await Promise.all(clients.map((client) => client.call("createTerminal", { channel: uri }).then(() => "created", (err: any) => err?.error?.code ?? String(err))));
      expect(outcomes.filter((outcome) => outcome === "created")).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome !== "created").every((outcome) => outcome === -32003)).toBe(true);
      expect(runners.flatMap((runner) => runner.registry.list({ "ahp.uri": uri }))).toHaveLength(1);
      await clients[0]!.call("disposeTerminal", { channel: uri });
    }
    for (const client of clients) client.close();
  });

  it("answer a client that moved from another gateway with -32008 or snapshots, never with a replay of the other's numbers", async () => {
    const uri = fresh();
    const before = await AhpTestClient.initialized(gateways[0]!.url, { clientId: "mover" });
    await before.call("createTerminal", { channel: uri });
    const { snapshot } = await before.call("subscribe", { channel: uri });
    before.dispatch(uri, { type: "terminal/input", data: "echo moved-$((3*3))\r" });
    await before.waitForOutput(uri, /moved-9\r\n/);
    const lastSeen = before.lastSeenServerSeq;
    before.close();
    // A gateway that never knew this client.
    const unknown = await AhpTestClient.connect(gateways[1]!.url);
    expect((await rpcErrorOf(unknown.call("reconnect", { channel: "ahp-root://", clientId: "mover", lastSeenServerSeq: lastSeen, subscriptions: [uri] }))).code).toBe(-32008);
    unknown.close();
    // A gateway that knows the client id, with a position it never gave it: snapshots.
    const there = await AhpTestClient.initialized(gateways[2]!.url, { clientId: "mover" });
    there.close();
    await there.closed();
    const again = await AhpTestClient.connect(gateways[2]!.url);
    const result = await again.call("reconnect", { channel: "ahp-root://", clientId: "mover", lastSeenServerSeq: Math.max(lastSeen, snapshot.fromSeq), subscriptions: [uri] });
    expect(result.type).toBe("snapshot");
    expect(contentText(result.snapshots[0].state)).toContain("moved-9\r\n");
    again.close();
  });

  it("let go of a terminal created and never read sooner than of one read and left", async () => {
    const lasting = await startGatewayOn(runners, tmpdir(), { followGraceMs: 60_000 });
    try {
      const client = await AhpTestClient.initialized(lasting.url);
      const [unread, read] = [fresh(), fresh()];
      for (const uri of [unread, read]) await client.call("createTerminal", { channel: uri });
      await client.call("subscribe", { channel: read });
      client.notify("unsubscribe", { channel: read });
      const { terminals } = lasting.gateway;
      expect(await eventually(() => terminals.linkAt(unread)!.follow.active === false, FRESH_FOLLOW_GRACE_MS + 3_000)).toBe(true);
      expect(terminals.linkAt(read)!.follow.active).toBe(true);
      for (const uri of [unread, read]) await client.call("disposeTerminal", { channel: uri });
      client.close();
    } finally {
      await lasting.gateway.close();
    }
  });
});
