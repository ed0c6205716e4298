import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { runServiceToExit } from "./service-process.js";
import { startTwoProcesses } from "./two-processes.js";

const users = (path: string, ...args: string[]) => runServiceToExit("gateway/main.ts", ["users", ...args, "--users", path]);

describe("npm run gateway -- users", () => {
  it("adds, issues a secret printed once (only its hash stored), lists and removes; a gateway signs the user in", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "cli-")), "users.json");
    const added = await users(path, "add", "carol", "--role", "member", "--role", "auditor");
    expect(added).toMatchObject({ code: 0, stdout: "" });
    const issued = await users(path, "token", "carol");
    expect(issued.code).toBe(0);
    const secret = issued.stdout.trim();
    expect(issued.stdout).toMatch(/^[\w-]{43}\n$/);
    expect(issued.stderr).toMatch(/only time the secret/);
    const stored = readFileSync(path, "utf8");
    expect(stored).not.toContain(secret);
    expect(JSON.parse(stored).users[0]).toEqual({ id: "carol", roles: ["member", "auditor"], token: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect((await users(path, "list")).stdout).toBe("carol\troles=member,auditor\tsecret=set\texpires=never\tunix-user=-\n");
    expect((await users(path, "add", "carol", "--role", "member")).code).toBe(1);
    expect((await users(path, "add", "dan", "--role", "member", "--unix-user", "dan-shell")).code).toBe(0);
    expect(JSON.parse(readFileSync(path, "utf8")).users[1]).toEqual({ id: "dan", roles: ["member"], unixUser: "dan-shell" });
    expect((await users(path, "add", "erin", "--role", "member", "--unix-user=-rf")).stderr).toMatch(/--unix-user must be a Unix account name/);
    expect((await users(path, "token", "nobody")).code).toBe(1);
    expect((await users(path, "frobnicate", "x")).code).toBe(2);
    expect(await users(path, "--help")).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Usage: npm run gateway -- users <command>/), stderr: "" });

    const system = await startTwoProcesses(["--users", path]);
    try {
      const client = await AhpTestClient.initialized(system.url);
      await client.call("authenticate", { resource: "ahp-terminal-gateway", token: secret });
      await client.call("createTerminal", { channel: "ahp-terminal:/carol" });
      expect((await users(path, "rm", "carol")).code).toBe(0);
      await expect(client.call("subscribe", { channel: "ahp-terminal:/carol" })).rejects.toMatchObject({ error: { code: -32007 } });
      expect(system.gateway.stderrLines.join("\n")).toMatch(/role is defined nowhere; it grants nothing/);
      // carol has no Unix account of her own: one warning at start says what that means.
      expect(system.gateway.stderrLines.filter((line) => /can reach the services' secrets/.test(line))).toHaveLength(1);
      expect(system.gateway.stderrLines.join("\n")).toMatch(/"users":\["carol"\]/);
      client.close();
    } finally {
      await system.stop();
    }
    expect((await users(path, "list")).stdout).toBe("dan\troles=member\tsecret=none\texpires=never\tunix-user=dan-shell\n");
  });

  it("refuses to touch a malformed file and says why", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "cli-bad-")), "users.json");
    writeFileSync(path, "{ not json");
    const result = await users(path, "add", "dave", "--role", "member");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/not a usable users file .*left as it is/);
    expect(readFileSync(path, "utf8")).toBe("{ not json");
  });
});
