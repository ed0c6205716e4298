import { describe, expect, it } from "vitest";
import { hashSecret } from "../../../gateway/auth/users-file.js";
import { MAX_CLIENT_NAME_CHARS, MAX_CLIENT_NAME_IDS } from "../../../gateway/handlers/client-names.js";
import { AhpTestClient, rpcErrorOf } from "../../support/ahp-test-client.js";
import { useTestGateway, usersFileWith } from "./harness.js";

const RESOURCE = "ahp-terminal-gateway";
const secrets = { alice: "alice-secret", bob: "bob-secret" };

const gateway = useTestGateway(() => {
  const usersPath = usersFileWith({
    users: [
      { id: "alice", roles: ["member"], token: hashSecret(secrets.alice) },
      { id: "bob", roles: ["member"], token: hashSecret(secrets.bob) },
    ],
  }, "client-names-");
  return { usersFile: usersPath };
});

/** A client that says who it is in `initialize`, then signs in as `who` (when given). */
async function connected(clientInfo: unknown, who?: keyof typeof secrets): Promise<{ client: AhpTestClient; clientId: string }> {
  const clientId = `names-${crypto.randomUUID()}`;
  const client = await AhpTestClient.connect(gateway.url);
  await client.call("initialize", { protocolVersions: ["1.1.0"], clientId, clientInfo, initialSubscriptions: [] });
  if (who) await client.call("authenticate", { resource: RESOURCE, token: secrets[who] });
  return { client, clientId };
}

/** A terminal `holder` opens, claimed by it. */
async function claimedBy(holder: AhpTestClient): Promise<string> {
  const uri = `ahp-terminal:/names-${crypto.randomUUID()}`;
  await holder.call("createTerminal", { channel: uri });
  return uri;
}

describe("x-clientNames", () => {
  it("names the holder of a claim by the person signed in on it and the client name it gave", async () => {
    const a = await connected({ name: "VS Code", version: "1.96.0" }, "alice");
    const uri = await claimedBy(a.client);
    // alice's second client (a console page) sees the terminal and asks who holds it.
    const b = await connected({ name: "ahp-terminal-console" }, "alice");
    const { names } = await b.client.call("x-clientNames", { clientIds: [a.clientId, "nobody-known"] });
    expect(names).toEqual({ [a.clientId]: { user: "alice", client: "VS Code", clientVersion: "1.96.0" } });
    expect((await b.client.call("x-clientNames", { clientIds: [b.clientId] })).names).toEqual({ [b.clientId]: { user: "alice", client: "ahp-terminal-console" } });

    // bob's root list does not show alice's terminal, so bob learns nothing of its holder.
    const bob = await connected({ name: "curious" }, "bob");
    expect((await bob.client.call("x-clientNames", { clientIds: [a.clientId] })).names).toEqual({});

    await a.client.call("disposeTerminal", { channel: uri });
    for (const { client } of [a, b, bob]) client.close();
  });

  it("keeps a client name without its control and bidirectional characters, cut to length", async () => {
    const sneaky = await connected({ name: "Evil\u001b[2J\u202eedoC SV\n", version: "1\u0007" }, "alice");
    const long = await connected({ name: "x".repeat(MAX_CLIENT_NAME_CHARS * 3) }, "alice");
    const { names } = await sneaky.client.call("x-clientNames", { clientIds: [sneaky.clientId, long.clientId] });
    // Only the person's own terminals' holders are answered, and these hold none: each asks about itself.
    expect(names).toEqual({ [sneaky.clientId]: { user: "alice", client: "Evil\ufffd[2J\ufffdedoC SV\ufffd", clientVersion: "1\ufffd" } });
    expect((await long.client.call("x-clientNames", { clientIds: [long.clientId] })).names[long.clientId]).toEqual({ user: "alice", client: "x".repeat(MAX_CLIENT_NAME_CHARS) });
    for (const { client } of [sneaky, long]) client.close();
  });

  it("names a client signed in after its terminal was claimed, and one that gave no clientInfo by its person alone", async () => {
    const late = await connected(undefined);
    await late.client.call("authenticate", { resource: RESOURCE, token: secrets.bob });
    const uri = await claimedBy(late.client);
    const asker = await connected({ name: "ahp-term" }, "bob");
    expect((await asker.client.call("x-clientNames", { clientIds: [late.clientId] })).names).toEqual({ [late.clientId]: { user: "bob" } });
    await late.client.call("disposeTerminal", { channel: uri });
    for (const { client } of [late, asker]) client.close();
  });

  it("refuses too many ids with -32602, ids that are not strings with -32602, and a signed-out connection with -32007", async () => {
    const member = await connected({ name: "VS Code" }, "alice");
    const tooMany = Array.from({ length: MAX_CLIENT_NAME_IDS + 1 }, (_, index) => `id-${index}`);
    expect(await rpcErrorOf(member.client.call("x-clientNames", { clientIds: tooMany }))).toMatchObject({ code: -32602, message: expect.stringContaining(`at most ${MAX_CLIENT_NAME_IDS}`) });
    expect((await rpcErrorOf(member.client.call("x-clientNames", { clientIds: [1] }))).code).toBe(-32602);
    expect((await rpcErrorOf(member.client.call("x-clientNames", {}))).code).toBe(-32602);

    const signedOut = await connected({ name: "VS Code" });
    expect(await rpcErrorOf(signedOut.client.call("x-clientNames", { clientIds: [member.clientId] }))).toMatchObject({ code: -32007, data: { resources: [{ resource: RESOURCE }] } });
    for (const { client } of [member, signedOut]) client.close();
  });
});
