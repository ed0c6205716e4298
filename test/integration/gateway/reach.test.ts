import { describe, expect, it } from "vitest";
import { hashSecret } from "../../../gateway/auth/users-file.js";
import { AhpTestClient, rpcErrorOf, type Envelope } from "../../support/ahp-test-client.js";
import { startGatewayOn, useTestGateway, usersFileWith } from "./harness.js";

const RESOURCE = "ahp-terminal-gateway";
const secrets = { ana: "ana-secret", ben: "ben-secret", root: "root-secret", pair: "pair-secret" };

let usersPath: string;
const gateway = useTestGateway(() => {
  usersPath = usersFileWith({
    users: [
      { id: "ana", roles: ["member"], token: hashSecret(secrets.ana) },
      { id: "ben", roles: ["member"], token: hashSecret(secrets.ben) },
      { id: "root", roles: ["admin"], token: hashSecret(secrets.root) },
      { id: "pair", roles: ["pair"], token: hashSecret(secrets.pair) },
    ],
    roles: { pair: ["terminal:read", "terminal:input", "terminal:others"] },
  }, "reach-");
  return { usersFile: usersPath };
});

async function signedIn(who: keyof typeof secrets, versions = ["1.1.0"]): Promise<AhpTestClient> {
  const client = await AhpTestClient.initialized(gateway.url, { clientId: `${who}-${crypto.randomUUID()}`, subscribe: ["ahp-root://"], versions });
  await client.call("authenticate", { channel: "ahp-root://", resource: RESOURCE, token: secrets[who] });
  return client;
}

const listed = (envelope: Envelope, uri: string): boolean => envelope.action.type === "root/terminalsChanged" && JSON.stringify(envelope.action).includes(uri);

/** The rejection reason a dispatched action gets (undefined: accepted). */
async function attempt(client: AhpTestClient, uri: string, action: Record<string, unknown>): Promise<string | undefined> {
  const seq = client.dispatch(uri, action);
  return (await client.waitForEnvelope((e) => e.channel === uri && e.origin?.clientSeq === seq)).rejectionReason;
}

describe("a member's terminal", () => {
  it("cannot be listed, read, typed into, resized, renamed, claimed, cleared or disposed of by another member", async () => {
    const ana = await signedIn("ana");
    const ben = await signedIn("ben");
    const uri = `ahp-terminal:/ana-${crypto.randomUUID()}`;
    await ana.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["/bin/sh"] } });
    await ana.call("subscribe", { channel: uri });
    await ana.waitForEnvelope((e) => listed(e, uri));
    // ben's own terminal proves ben's envelopes flow: anything of ana's would have come before it.
    const own = `ahp-terminal:/ben-${crypto.randomUUID()}`;
    await ben.call("createTerminal", { channel: own });
    await ben.waitForEnvelope((e) => listed(e, own));
    expect(JSON.stringify(ben.frames)).not.toContain(uri);
    expect(JSON.stringify((await ben.call("subscribe", { channel: "ahp-root://" })).snapshot)).not.toContain(uri);

    const refused = await rpcErrorOf(ben.call("subscribe", { channel: uri }));
    expect(refused).toMatchObject({ code: -32009, message: expect.stringMatching(/ben \(member\) may not do this to that terminal: it belongs to another person/) });
    for (const action of [
      { type: "terminal/input", data: "echo ben-was-here\r" },
      { type: "terminal/resized", cols: 33, rows: 11 },
      { type: "terminal/titleChanged", title: "pwned" },
      { type: "terminal/claimed", claim: { kind: "client", clientId: "ben" } },
      { type: "terminal/cleared" },
    ]) {
      expect(await attempt(ben, uri, action), action.type).toMatch(/belongs to another person/);
    }
    expect((await rpcErrorOf(ben.call("disposeTerminal", { channel: uri }))).code).toBe(-32009);

    // Nothing of it reached ana's terminal: her shell saw no input, her state no change.
    ana.dispatch(uri, { type: "terminal/input", data: "echo ana-$((6*7))\r" });
    await ana.waitForOutput(uri, /ana-42/);
    expect(ana.outputOf(uri)).not.toContain("ben-was-here");
    expect((await ana.call("subscribe", { channel: uri })).snapshot.state).toMatchObject({ cols: 80, rows: 24, title: expect.not.stringMatching(/pwned/) });
    expect(ben.frames.some((frame) => JSON.stringify(frame).includes("ana-42"))).toBe(false);
    await ana.call("disposeTerminal", { channel: uri });
    await ben.call("disposeTerminal", { channel: own });
    ana.close();
    ben.close();
  });

  it("is reached by an admin, and by a role holding terminal:others for what its grants allow", async () => {
    const ana = await signedIn("ana");
    const root = await signedIn("root");
    const pair = await signedIn("pair");
    const uri = `ahp-terminal:/shared-${crypto.randomUUID()}`;
    await ana.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["/bin/sh"] } });
    for (const client of [root, pair]) await client.waitForEnvelope((e) => listed(e, uri));
    await pair.call("subscribe", { channel: uri });
    expect(await attempt(pair, uri, { type: "terminal/input", data: "echo pair-$((2+3))\r" })).toBeUndefined();
    await pair.waitForOutput(uri, /pair-5/);
    expect(await attempt(pair, uri, { type: "terminal/resized", cols: 90, rows: 30 })).toMatch(/needs terminal:resize/);
    await root.call("subscribe", { channel: uri });
    expect(await attempt(root, uri, { type: "terminal/resized", cols: 90, rows: 30 })).toBeUndefined();
    expect(await root.call("disposeTerminal", { channel: uri })).toBeNull();
    for (const client of [ana, root, pair]) client.close();
  });

  it("is recorded as its owner's in the runner's labels, so a gateway that adopts it applies the same rule", async () => {
    const ana = await signedIn("ana");
    const uri = `ahp-terminal:/adopted-${crypto.randomUUID()}`;
    await ana.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["/bin/sh"] } });
    const { terminals } = await gateway.runner.grpc.list({});
    expect(terminals.find((info) => info.labels["ahp.uri"] === uri)?.labels["ahp.owner"]).toBe("user:ana");

    const second = await startGatewayOn(gateway.runner, gateway.home, { usersFile: usersPath });
    try {
      const signIn = async (who: keyof typeof secrets): Promise<AhpTestClient> => {
        const client = await AhpTestClient.initialized(second.url, { subscribe: ["ahp-root://"], versions: ["1.1.0"] });
        await client.call("authenticate", { resource: RESOURCE, token: secrets[who] });
        return client;
      };
      const ben = await signIn("ben");
      expect((await rpcErrorOf(ben.call("subscribe", { channel: uri }))).message).toMatch(/belongs to another person/);
      expect(JSON.stringify((await ben.call("subscribe", { channel: "ahp-root://" })).snapshot)).not.toContain(uri);
      const anaThere = await signIn("ana");
      expect((await anaThere.call("subscribe", { channel: uri })).snapshot.state.lifecycle).toEqual({ status: "running" });
      for (const client of [ben, anaThere]) client.close();
    } finally {
      await second.gateway.close();
    }
    await ana.call("disposeTerminal", { channel: uri });
    ana.close();
  });

  it("leaves a reconnecting member's subscription to it out, and a released one unreadable", async () => {
    const ana = await signedIn("ana");
    const clientId = `ben-${crypto.randomUUID()}`;
    const ben = await AhpTestClient.initialized(gateway.url, { clientId, subscribe: ["ahp-root://"], versions: ["1.1.0"] });
    await ben.call("authenticate", { resource: RESOURCE, token: secrets.ben });
    const uri = `ahp-terminal:/released-${crypto.randomUUID()}`;
    await ana.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "echo done; sleep 30"] } });
    const result = (await ben.call("reconnect", { clientId, lastSeenServerSeq: 0, subscriptions: ["ahp-root://", uri] })) as { snapshots: Array<{ resource: string }> };
    expect(result.snapshots.map((snapshot) => snapshot.resource)).toEqual(["ahp-root://"]);
    expect(JSON.stringify(result)).not.toContain(uri);
    await ana.call("disposeTerminal", { channel: uri });
    expect((await rpcErrorOf(ben.call("subscribe", { channel: uri }))).message).toMatch(/belongs to another person/);
    expect((await ana.call("subscribe", { channel: uri })).snapshot.state.lifecycle.status).toBe("exited");
    ana.close();
    ben.close();
  });
});

describe("signing in and out", () => {
  it("sends the root list again as the connection may now see it", async () => {
    const ana = await signedIn("ana");
    const uri = `ahp-terminal:/seen-${crypto.randomUUID()}`;
    await ana.call("createTerminal", { channel: uri });
    const later = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"], versions: ["1.1.0"] });
    expect(JSON.stringify(later.frames)).not.toContain(uri);
    await later.call("authenticate", { resource: RESOURCE, token: secrets.ana });
    await later.waitForEnvelope((e) => listed(e, uri));
    await later.call("authenticate", { resource: RESOURCE, token: "" });
    await later.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && (e.action as unknown as { terminals: unknown[] }).terminals.length === 0);
    await ana.call("disposeTerminal", { channel: uri });
    ana.close();
    later.close();
  });
});

describe("the host's own terminals", () => {
  it("are listed and readable for every member, and driven only with terminal:others", async () => {
    const ben = await signedIn("ben");
    const root = await signedIn("root");
    const handle = await gateway.gateway.backend!.open({ cwd: "/tmp", program: "/bin/sh", claim: { session: "ahp-session:/s", chat: "ahp-chat:/c" } });
    await ben.waitForEnvelope((e) => listed(e, handle.uri));
    await ben.call("subscribe", { channel: handle.uri });
    expect(await attempt(ben, handle.uri, { type: "terminal/input", data: "echo ben\r" })).toMatch(/belongs to another person/);
    await root.call("subscribe", { channel: handle.uri });
    expect(await attempt(root, handle.uri, { type: "terminal/input", data: "echo root-$((1+1))\r" })).toBeUndefined();
    await ben.waitForOutput(handle.uri, /root-2/);
    await handle.release();
    ben.close();
    root.close();
  });
});
