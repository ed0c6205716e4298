import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashSecret, writeUsersFile } from "../../../gateway/auth/users-file.js";
import { AhpTestClient, contentText, rpcErrorOf } from "../../support/ahp-test-client.js";
import { useTestGateway, type TestGateway } from "./harness.js";

const ROOT = process.getuid?.() === 0;
const SETPRIV = existsSync("/usr/bin/setpriv");
if (!ROOT || !SETPRIV) console.warn(`SKIPPED: the gateway's unixUser tests need root (to create throwaway accounts) and /usr/bin/setpriv; running as uid ${process.getuid?.()}`);

const RESOURCE = "ahp-terminal-gateway";
const suffix = `${process.pid}`.slice(-5);
const ANA = `ahpg${suffix}a`;
const HOST = `ahpg${suffix}h`;
const claim = { session: "ahp-session:/s1", chat: "ahp-chat:/c1", turnId: "t1", toolCallId: "tool-1" };

let dir: string;

/** Signs in with `secret` on `on`. */
async function signedIn(on: TestGateway, secret: string): Promise<AhpTestClient> {
  const client = await AhpTestClient.initialized(on.url, { subscribe: ["ahp-root://"] });
  await client.call("authenticate", { channel: "ahp-root://", resource: RESOURCE, token: secret });
  return client;
}

/** Runs a shell line in a new terminal of `client` and returns its output once it exited. */
async function runLine(client: AhpTestClient, channel: string, line: string): Promise<string> {
  await client.call("createTerminal", { channel, _meta: { "ahp.argv": ["/bin/sh", "-c", line] } });
  const { snapshot } = await client.call("subscribe", { channel });
  // The output before the subscription is in the snapshot (with the exit, when it came first); the rest follows.
  if (snapshot.state.exitCode === undefined) await client.waitForEnvelope((envelope) => envelope.channel === channel && envelope.action.type === "terminal/exited");
  return contentText(snapshot.state) + client.outputOf(channel);
}

describe.skipIf(!ROOT || !SETPRIV)("a users file's unixUser", () => {
  beforeAll(() => {
    for (const name of [ANA, HOST]) execFileSync("useradd", ["--create-home", "--shell", "/bin/bash", name]);
    dir = mkdtempSync(join(tmpdir(), "gateway-run-as-"));
    writeUsersFile(join(dir, "users.json"), {
      users: [
        { id: "ana", roles: ["member"], token: hashSecret("ana-secret"), unixUser: ANA },
        { id: "sam", roles: ["member"], token: hashSecret("sam-secret") },
      ],
      roles: {},
    });
  });
  // Registered first, so it runs last: after both gateways below have closed.
  afterAll(() => {
    for (const name of [ANA, HOST]) execFileSync("userdel", ["--remove", name], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  });
  const gateway = useTestGateway(() => ({ usersFile: join(dir, "users.json"), hostTerminalUser: HOST, runner: { runAs: { allowed: true, allowRoot: false } } }));
  const closedGateway = useTestGateway(() => ({ usersFile: join(dir, "users.json") }));

  it("runs that person's terminals as the account, which cannot read the services' environment or memory", async () => {
    const ana = await signedIn(gateway, "ana-secret");
    const output = await runLine(
      ana,
      "ahp-terminal:/ana",
      `echo "user=$(id -un) home=$HOME"; cat /proc/${process.pid}/environ >/dev/null 2>&1 && echo ENVIRON-READ || echo environ-denied; head -c 1 /proc/${process.pid}/mem >/dev/null 2>&1 && echo MEM-READ || echo mem-denied`,
    );
    expect(output).toContain(`user=${ANA} home=/home/${ANA}`);
    expect(output).toContain("environ-denied");
    expect(output).toContain("mem-denied");
    expect(output).not.toMatch(/ENVIRON-READ|MEM-READ/);
    // A person without a unixUser runs as the services' own account (what the start warning is about).
    const sam = await signedIn(gateway, "sam-secret");
    expect(await runLine(sam, "ahp-terminal:/sam", 'echo "user=$(id -un)"')).toContain("user=root");
    ana.close();
    sam.close();
  });

  it("runs the host's own terminals (! commands, backends) as --host-terminal-user", async () => {
    const result = await gateway.gateway.runTurnCommand({ ...claim, workingDirectories: ["file:///tmp"], line: "id -un" });
    expect(result.output.trim()).toBe(HOST);
  });

  it("is refused by a runner without --allow-run-as, with the reason", async () => {
    const ana = await signedIn(closedGateway, "ana-secret");
    const error = await rpcErrorOf(ana.call("createTerminal", { channel: "ahp-terminal:/refused" }));
    expect(error).toMatchObject({ code: -32009, message: expect.stringMatching(/--allow-run-as/) });
    ana.close();
  });
});
