import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hashSecret, writeUsersFile, type UserRecord } from "../../../gateway/auth/users-file.js";
import { AhpTestClient, rpcErrorOf } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { useTestGateway } from "./harness.js";

const RESOURCE = "ahp-terminal-gateway";
/** What the issue promises: a change to the users file reaches live connections within a second. */
const REVOCATION_BOUND_MS = 1_000;
/** A terminal that prints a numbered line every 20 ms until it is disposed of. */
const TICKER = ["/bin/sh", "-c", 'i=0; while :; do i=$((i+1)); echo "tick-$i secret-line"; sleep 0.02; done'];
/** Lines the ticker prints, read by someone who still may, while a revoked client must get none: half a second of output. */
const TICKS_AFTER_REVOCATION = 25;

let usersPath: string;
/** bob and dave watch alice's terminal: besides their members' grants they may reach other people's terminals. */
const everyone: Record<string, UserRecord> = {
  alice: { id: "alice", roles: ["admin"], token: hashSecret("alice-secret") },
  bob: { id: "bob", roles: ["member", "observer"], token: hashSecret("bob-secret") },
  dave: { id: "dave", roles: ["member", "observer"], token: hashSecret("dave-secret") },
};

function writeUsers(users: UserRecord[]): void {
  writeUsersFile(usersPath, { users, roles: { observer: ["terminal:others"] } });
}

const gateway = useTestGateway(() => {
  usersPath = join(mkdtempSync(join(tmpdir(), "revocation-")), "users.json");
  writeUsers(Object.values(everyone));
  return { usersFile: usersPath };
});

async function signedIn(secret: string): Promise<AhpTestClient> {
  const client = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"], versions: ["1.1.0"] });
  await client.call("authenticate", { channel: "ahp-root://", resource: RESOURCE, token: secret });
  return client;
}

/** Subscribes to a ticking terminal and waits until its output flows. */
async function watching(client: AhpTestClient, channel: string): Promise<void> {
  await client.call("subscribe", { channel });
  await client.waitForOutput(channel, /tick-\d+ secret-line/);
}

const isAuthRequired = (frame: unknown): boolean => (frame as { method?: string }).method === "auth/required";

/** The number of the last tick line in `text` (0 when there is none). */
const lastTick = (text: string): number => Math.max(0, ...[...text.matchAll(/tick-(\d+) /g)].map((match) => Number(match[1])));

/** Waits until `witness`, who still reads the ticking terminal, has seen TICKS_AFTER_REVOCATION more of its lines. */
async function tickerMovesOn(witness: AhpTestClient, channel: string): Promise<void> {
  await watching(witness, channel);
  const from = lastTick(witness.outputOf(channel));
  expect(await eventually(() => lastTick(witness.outputOf(channel)) >= from + TICKS_AFTER_REVOCATION)).toBe(true);
}

/** The `auth/required` notifications a client got, and the terminal output frames for `channel` that came after the first. */
function afterRevocation(client: AhpTestClient, channel: string): { notices: unknown[]; outputAfter: number } {
  const index = client.frames.findIndex(isAuthRequired);
  const notices = client.frames.filter(isAuthRequired);
  const outputAfter = index < 0 ? 0 : client.frames.slice(index).filter((frame) => (frame as { method?: string; params?: { channel?: string } }).method === "action" && (frame as { params: { channel: string } }).params.channel === channel).length;
  return { notices, outputAfter };
}

/**
 * Runs `body` with alice (an admin) signed in and a ticking terminal of hers at `channel`; then
 * disposes of it, closes every client `signIn` opened, and puts the users file back as it was.
 */
async function withTicker(channel: string, body: (alice: AhpTestClient, signIn: (secret: string) => Promise<AhpTestClient>) => Promise<void>): Promise<void> {
  const opened: AhpTestClient[] = [];
  const signIn = async (secret: string): Promise<AhpTestClient> => {
    const client = await signedIn(secret);
    opened.push(client);
    return client;
  };
  const alice = await signIn("alice-secret");
  await alice.call("createTerminal", { channel, _meta: { "ahp.argv": TICKER } });
  try {
    await body(alice, signIn);
  } finally {
    await alice.call("disposeTerminal", { channel });
    for (const client of opened) client.close();
    writeUsers(Object.values(everyone));
  }
}

/** Changes the users file with `change` and expects `client` to be told (auth/required) within REVOCATION_BOUND_MS. */
async function expectCutOffAfter(client: AhpTestClient, change: () => void): Promise<void> {
  const changedAt = Date.now();
  change();
  await client.waitFor(isAuthRequired, 3_000);
  expect(Date.now() - changedAt).toBeLessThan(REVOCATION_BOUND_MS);
}

describe("revoking a user's standing", () => {
  it("removing a user stops every terminal subscription within a second: auth/required, then nothing more of the terminal", async () => {
    const channel = "ahp-terminal:/revoke-remove";
    await withTicker(channel, async (alice, signIn) => {
      const bob = await signIn("bob-secret");
      await watching(bob, channel);

      await expectCutOffAfter(bob, () => writeUsers([everyone.alice!, everyone.dave!]));
      // The terminal keeps printing (alice still reads it), but none of it reaches bob any more.
      await tickerMovesOn(alice, channel);
      const { notices, outputAfter } = afterRevocation(bob, channel);
      expect(notices).toEqual([{ jsonrpc: "2.0", method: "auth/required", params: expect.objectContaining({ channel: "ahp-root://", reason: "required", resource: expect.objectContaining({ resource: RESOURCE }) }) }]);
      expect(outputAfter).toBe(0);
      expect((await rpcErrorOf(bob.call("subscribe", { channel }))).code).toBe(-32007);
    });
  });

  it("a role that no longer reads terminals keeps the socket and the root channel, and is told which channels it lost", async () => {
    const channel = "ahp-terminal:/revoke-role";
    await withTicker(channel, async (alice, signIn) => {
      const dave = await signIn("dave-secret");
      await watching(dave, channel);

      await expectCutOffAfter(dave, () => writeUsers([everyone.alice!, everyone.bob!, { ...everyone.dave!, roles: ["guest"] }]));
      await tickerMovesOn(alice, channel);
      const { notices, outputAfter } = afterRevocation(dave, channel);
      expect(notices).toEqual([expect.objectContaining({ params: expect.objectContaining({ channel, reason: "required" }) })]);
      expect(outputAfter).toBe(0);
      // Still signed in, as a guest: the root channel answers, terminals are refused for the grant.
      expect((await dave.call("subscribe", { channel: "ahp-root://" })).snapshot).toBeDefined();
      expect((await rpcErrorOf(dave.call("subscribe", { channel }))).code).toBe(-32009);
    });
  });

  it("rotating a user's secret signs out every connection signed in with the old one within a second; the new one signs in", async () => {
    const channel = "ahp-terminal:/revoke-rotate";
    await withTicker(channel, async (alice, signIn) => {
      const bob = await signIn("bob-secret");
      const bobElsewhere = await signIn("bob-secret");
      await watching(bob, channel);
      await watching(bobElsewhere, channel);

      await expectCutOffAfter(bob, () => writeUsers([everyone.alice!, everyone.dave!, { ...everyone.bob!, token: hashSecret("bob-new-secret") }]));
      await bobElsewhere.waitFor(isAuthRequired, 1_000);
      await tickerMovesOn(alice, channel);
      for (const client of [bob, bobElsewhere]) {
        expect(afterRevocation(client, channel).outputAfter).toBe(0);
        expect((await rpcErrorOf(client.call("subscribe", { channel }))).code).toBe(-32007);
      }
      // alice's own sign-in was not touched.
      expect(alice.frames.some(isAuthRequired)).toBe(false);
      expect((await rpcErrorOf(bob.call("authenticate", { channel: "ahp-root://", resource: RESOURCE, token: "bob-secret" }))).code).toBe(-32007);
      await bob.call("authenticate", { channel: "ahp-root://", resource: RESOURCE, token: "bob-new-secret" });
      await watching(bob, channel);
    });
  });

  it("an expiry in the users file signs a live connection out when it passes", async () => {
    const channel = "ahp-terminal:/revoke-expiry";
    await withTicker(channel, async (alice, signIn) => {
      const expiresAt = Date.now() + 1_500;
      // Signing in reads the file as it is now: bob signs in under the record with the expiry.
      writeUsers([everyone.alice!, everyone.dave!, { ...everyone.bob!, expiresAt: new Date(expiresAt).toISOString() }]);
      const bob = await signIn("bob-secret");
      await watching(bob, channel);
      await bob.waitFor(isAuthRequired, 5_000);
      expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
      expect(Date.now() - expiresAt).toBeLessThan(REVOCATION_BOUND_MS);
      await tickerMovesOn(alice, channel);
      expect(afterRevocation(bob, channel).outputAfter).toBe(0);
    });
  });
});
