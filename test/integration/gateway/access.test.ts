import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hashSecret } from "../../../gateway/auth/users-file.js";
import { AhpTestClient, contentText, rpcErrorOf } from "../../support/ahp-test-client.js";
import { startTestGateway, useTestGateway, usersFileWith } from "./harness.js";

const RESOURCE = "ahp-terminal-gateway";
const secrets = { alice: "alice-secret", bob: "bob-secret", gus: "gus-secret", eve: "eve-secret" };

const gateway = useTestGateway(() => {
  const usersPath = usersFileWith({
    users: [
      { id: "alice", roles: ["admin"], token: hashSecret(secrets.alice) },
      { id: "bob", roles: ["viewer"], token: hashSecret(secrets.bob) },
      { id: "gus", roles: ["guest", "nonexistent-role"], token: hashSecret(secrets.gus) },
      { id: "eve", roles: ["member"], token: hashSecret(secrets.eve), expiresAt: "2001-01-01T00:00:00Z" },
    ],
    roles: { viewer: ["terminal:read", "terminal:resize", "terminal:others"] },
  }, "users-");
  return { usersFile: usersPath };
});

async function signedIn(who: keyof typeof secrets, clientId = who as string): Promise<AhpTestClient> {
  const client = await AhpTestClient.initialized(gateway.url, { clientId, subscribe: ["ahp-root://"] });
  await client.call("authenticate", { channel: "ahp-root://", resource: RESOURCE, token: secrets[who] });
  return client;
}

describe("signing in", () => {
  it("starts signed out: terminal commands get -32007 listing the resource as protected resource metadata", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    const error = await rpcErrorOf(client.call("createTerminal", { channel: "ahp-terminal:/anon" }));
    expect(error).toMatchObject({ code: -32007, data: { resources: [{ resource: RESOURCE, resource_name: expect.any(String), required: true }] } });
    expect((await client.call("subscribe", { channel: "ahp-root://" })).snapshot.state.agents).toEqual([]);
    client.close();
  });

  it("refuses a wrong token with -32007, an unknown resource with -32602, and an expired user", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    expect((await rpcErrorOf(client.call("authenticate", { resource: RESOURCE, token: "nope" }))).code).toBe(-32007);
    expect((await rpcErrorOf(client.call("authenticate", { resource: "other", token: secrets.alice }))).code).toBe(-32602);
    expect((await rpcErrorOf(client.call("authenticate", { resource: RESOURCE, token: secrets.eve }))).code).toBe(-32007);
    client.close();
  });

  it("signs out with an empty token", async () => {
    const client = await signedIn("alice");
    await client.call("createTerminal", { channel: "ahp-terminal:/signout" });
    expect(await client.call("authenticate", { resource: RESOURCE, token: "" })).toEqual({});
    expect((await rpcErrorOf(client.call("subscribe", { channel: "ahp-terminal:/signout" }))).code).toBe(-32007);
    client.close();
  });
});

describe("each operation, tried by an admin, a viewer, a guest and nobody", () => {
  it("is allowed or refused with the right code and reason", async () => {
    const alice = await signedIn("alice");
    const bob = await signedIn("bob");
    const gus = await signedIn("gus");
    const nobody = await AhpTestClient.initialized(gateway.url, { clientId: "nobody", subscribe: ["ahp-root://"] });
    const uri = "ahp-terminal:/matrix";

    for (const [client, code] of [[nobody, -32007], [gus, -32009], [bob, -32009]] as const) {
      const error = await rpcErrorOf(client.call("createTerminal", { channel: `${uri}-${code}` }));
      expect(error.code).toBe(code);
      expect(error).not.toHaveProperty("data.request");
    }
    expect((await rpcErrorOf(gus.call("createTerminal", { channel: `${uri}-x` }))).message).toMatch(/gus \(guest, nonexistent-role\) may not do this: it needs terminal:create/);
    await alice.call("createTerminal", { channel: uri });

    // The root list shows a terminal to those who reach it (bob may reach others' terminals), not to a guest or the signed out.
    await bob.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes(uri));
    for (const client of [gus, nobody]) {
      const { snapshot } = await client.call("subscribe", { channel: "ahp-root://" });
      expect(snapshot.state.terminals).toEqual([]);
      expect(JSON.stringify(client.frames)).not.toContain(uri);
    }
    expect((await rpcErrorOf(nobody.call("subscribe", { channel: uri }))).code).toBe(-32007);
    expect((await rpcErrorOf(gus.call("subscribe", { channel: uri }))).message).toMatch(/needs terminal:output/);
    await bob.call("subscribe", { channel: uri });
    await alice.call("subscribe", { channel: uri });

    const clientIds = new Map<AhpTestClient, string>([[alice, "alice"], [bob, "bob"], [gus, "gus"], [nobody, "nobody"]]);
    const attempt = async (client: AhpTestClient, action: Record<string, unknown>): Promise<string | undefined> => {
      const seq = client.dispatch(uri, action);
      const mine = (e: { origin?: { clientId: string; clientSeq: number } }) => e.origin?.clientSeq === seq && e.origin.clientId === clientIds.get(client);
      return (await client.waitForEnvelope(mine)).rejectionReason;
    };
    const actions: Array<[Record<string, unknown>, string]> = [
      [{ type: "terminal/input", data: "echo typed-$((2*2))\r" }, "terminal:input"],
      [{ type: "terminal/titleChanged", title: "renamed" }, "terminal:rename"],
      [{ type: "terminal/cleared" }, "terminal:clear"],
      [{ type: "terminal/claimed", claim: { kind: "session", session: "ahp-session:/s" } }, "terminal:claim"],
    ];
    for (const [action, grant] of actions) {
      expect(await attempt(bob, action)).toBe(`bob (viewer) may not do this: it needs ${grant}`);
      expect(await attempt(nobody, action)).toMatch(/^Sign in first/);
    }
    expect(await attempt(bob, { type: "terminal/resized", cols: 90, rows: 30 })).toBeUndefined();
    expect(await attempt(alice, { type: "terminal/input", data: "echo typed-$((2*2))\r" })).toBeUndefined();
    await bob.waitForOutput(uri, /typed-4\r\n/);
    expect(await attempt(alice, { type: "terminal/titleChanged", title: "by alice" })).toBeUndefined();
    expect((await rpcErrorOf(bob.call("disposeTerminal", { channel: uri }))).code).toBe(-32009);
    expect((await rpcErrorOf(nobody.call("disposeTerminal", { channel: uri }))).code).toBe(-32007);
    expect(await alice.call("disposeTerminal", { channel: uri })).toBeNull();
    for (const client of [alice, bob, gus, nobody]) client.close();
  });
});

describe("claims", () => {
  it("are parsed strictly on dispatch, and of two conflicting hand-overs the first wins", async () => {
    const alice = await signedIn("alice", "claims-alice");
    const uri = "ahp-terminal:/claims";
    await alice.call("createTerminal", { channel: uri });
    const mine = (seq: number) => (e: { origin?: { clientId: string; clientSeq: number } }) => e.origin?.clientId === "claims-alice" && e.origin.clientSeq === seq;
    const bad = alice.dispatch(uri, { type: "terminal/claimed", claim: { kind: "robot", id: 1 } });
    expect((await alice.waitForEnvelope(mine(bad))).rejectionReason).toMatch(/invalid claim: claim kind must be "client" or "session"/);
    const first = alice.dispatch(uri, { type: "terminal/claimed", claim: { kind: "client", clientId: "someone-else" } });
    const second = alice.dispatch(uri, { type: "terminal/claimed", claim: { kind: "session", session: "ahp-session:/late" } });
    expect((await alice.waitForEnvelope(mine(first))).rejectionReason).toBeUndefined();
    expect((await alice.waitForEnvelope(mine(second))).rejectionReason).toMatch(/held by client someone-else/);
    expect((await alice.call("subscribe", { channel: uri })).snapshot.state.claim).toEqual({ kind: "client", clientId: "someone-else" });
    alice.close();
  });
});

describe("a removed user", () => {
  it("keeps the socket but has the next command refused", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "users-rm-")), "users.json");
    writeFileSync(path, JSON.stringify({ users: [{ id: "temp", roles: ["member"], token: hashSecret("temp-secret") }] }));
    const own = await startTestGateway({ usersFile: path });
    try {
      const client = await AhpTestClient.initialized(own.url);
      await client.call("authenticate", { resource: RESOURCE, token: "temp-secret" });
      await client.call("createTerminal", { channel: "ahp-terminal:/temp" });
      const file = JSON.parse(readFileSync(path, "utf8"));
      file.users = [];
      writeFileSync(path, JSON.stringify(file));
      expect((await rpcErrorOf(client.call("subscribe", { channel: "ahp-terminal:/temp" }))).code).toBe(-32007);
      expect(await client.call("ping")).toBeNull();
      client.close();
    } finally {
      await own.close();
    }
  });

  it("a malformed users file lets nobody in", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "users-bad-")), "users.json");
    writeFileSync(path, '{"users": [{"id": "x", "roles": "member"}]}');
    const own = await startTestGateway({ usersFile: path });
    try {
      const client = await AhpTestClient.initialized(own.url);
      expect((await rpcErrorOf(client.call("authenticate", { resource: RESOURCE, token: "anything" }))).code).toBe(-32007);
      expect(readFileSync(path, "utf8")).toBe('{"users": [{"id": "x", "roles": "member"}]}');
      client.close();
    } finally {
      await own.close();
    }
  });
});

describe("defaultShell, per connection", () => {
  it("is kept on the connection that pushed it, seen only by it, and runs its terminals", async () => {
    const alice = await signedIn("alice", "alice-shell");
    const other = await signedIn("alice", "alice-other");
    const anonymous = await AhpTestClient.initialized(gateway.url, { clientId: "anon-shell" });
    const seq = alice.dispatch("ahp-root://", { type: "root/configChanged", config: { defaultShell: "/bin/bash" } });
    const echo = await alice.waitForEnvelope((e) => e.origin?.clientSeq === seq && e.action.type === "root/configChanged");
    expect(echo.rejectionReason).toBeUndefined();
    expect(echo.action).toMatchObject({ config: { defaultShell: "/bin/bash" } });
    await other.call("ping");
    expect(other.envelopes().some((e) => e.action.type === "root/configChanged")).toBe(false);
    expect((await alice.call("subscribe", { channel: "ahp-root://" })).snapshot.state.config.values).toEqual({ defaultShell: "/bin/bash" });
    expect((await other.call("subscribe", { channel: "ahp-root://" })).snapshot.state.config.values).toEqual({});

    for (const [client, uri] of [[alice, "ahp-terminal:/shell-alice"], [other, "ahp-terminal:/shell-other"]] as const) {
      await client.call("createTerminal", { channel: uri });
      await client.call("subscribe", { channel: uri });
      client.dispatch(uri, { type: "terminal/input", data: "echo shell=[$0]\r" });
    }
    expect(await alice.waitForOutput("ahp-terminal:/shell-alice", /shell=\[[^\]]*bash\]/)).toBeTruthy();
    await other.waitForOutput("ahp-terminal:/shell-other", /shell=\[\/bin\/sh\]/);

    for (const bad of [{ defaultShell: "bash" }, { defaultShell: "/etc/passwd" }, { defaultShell: "/no/such/shell" }, { defaultShell: 7 }]) {
      const badSeq = alice.dispatch("ahp-root://", { type: "root/configChanged", config: bad });
      expect((await alice.waitForEnvelope((e) => e.origin?.clientSeq === badSeq)).rejectionReason).toMatch(/defaultShell/);
    }
    const anonSeq = anonymous.dispatch("ahp-root://", { type: "root/configChanged", config: { defaultShell: "/bin/bash" } });
    expect((await anonymous.waitForEnvelope((e) => e.origin?.clientSeq === anonSeq)).rejectionReason).toMatch(/^Sign in first/);
    expect(contentText((await alice.call("subscribe", { channel: "ahp-terminal:/shell-alice" })).snapshot.state)).toContain("bash");
    for (const client of [alice, other, anonymous]) client.close();
  });
});
