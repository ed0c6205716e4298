import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_CODES } from "../../lib/exit-codes.js";
import { freePort, listen } from "../../lib/listen.js";
import { useTestCertificates } from "../support/test-certificates.js";
import { useRunnerProcess } from "./runner-process.js";
import { runServiceToExit } from "./service-process.js";

const RUNNER = "services/runner/main.ts";
const GATEWAY = "gateway/main.ts";
const LAUNCHER = "launcher/main.ts";
/** A line of a Node stack trace. */
const STACK_LINE = /^\s+at /m;

const certs = useTestCertificates();
const scratch = mkdtempSync(join(tmpdir(), "startup-failures-"));
const env = { RUNNER_TOKEN: "startup-token", HOME: scratch };
let taken: Server;
let takenPort: number;
beforeAll(async () => {
  taken = createServer();
  takenPort = (await listen(taken, 0, "127.0.0.1")).port;
});
afterAll(() => new Promise((resolve) => taken.close(resolve)));

/** Starts `entry` with `args`, expecting it to fail: its exit code and the one line it said why in (besides its JSON log lines), without a stack. */
async function failure(entry: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; line: string }> {
  const { code, stderr } = await runServiceToExit(entry, args, { ...env, ...extraEnv });
  expect(stderr).not.toMatch(STACK_LINE);
  // The failure is said once: no log line besides takes it for something else (a refused connection).
  expect(stderr).not.toContain("could not accept a connection");
  const said = stderr.split("\n").filter((line) => line !== "" && !line.startsWith('{"level":'));
  expect(said, stderr).toHaveLength(1);
  return { code, line: said[0]! };
}

describe("a runner that cannot start", () => {
  it("says which port is in use and exits 5, with the stack only at --log-level debug", async () => {
    expect(await failure(RUNNER, ["--port", String(takenPort)])).toEqual({
      code: EXIT_CODES.cannotListen,
      line: `runner: --port ${takenPort}: the port is already in use on 127.0.0.1; stop what listens there, or choose another port (0 picks a free one)`,
    });
    expect(await failure(RUNNER, ["--port", "0", "--metrics-port", String(takenPort)])).toMatchObject({ code: 5, line: expect.stringContaining(`runner: --metrics-port ${takenPort}: the port is already in use`) });
    const debug = await runServiceToExit(RUNNER, ["--port", String(takenPort), "--log-level", "debug"], env);
    expect(debug.code).toBe(5);
    expect(debug.stderr).toMatch(STACK_LINE);
  });

  it("names an address that is not this machine's", async () => {
    // A documentation address (TEST-NET-3) is on no interface here.
    expect(await failure(RUNNER, ["--host", "203.0.113.1", "--port", "0"])).toEqual({
      code: 5,
      line: "runner: --host 203.0.113.1: not an address of this machine; give one of its addresses, or 0.0.0.0 for every one",
    });
  });

  it("names a token file it cannot read, and one that holds nothing (exit 3)", async () => {
    expect(await failure(RUNNER, ["--port", "0", "--token-file", join(scratch, "absent")])).toMatchObject({ code: 3, line: expect.stringMatching(/^runner: --token-file: cannot read ".*absent": ENOENT \(check the path/) });
    const empty = join(scratch, "empty-token");
    writeFileSync(empty, "\n", { mode: 0o600 });
    expect(await failure(RUNNER, ["--port", "0", "--token-file", empty])).toMatchObject({ code: 3, line: expect.stringContaining("is empty; put the token in it") });
  });

  it("refuses a certificate that is no certificate (exit 4)", async () => {
    const junk = join(scratch, "junk.crt");
    writeFileSync(junk, "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
    expect(await failure(RUNNER, ["--port", "0", "--tls-cert", junk, "--tls-key", certs.serverKey])).toMatchObject({ code: 4, line: expect.stringMatching(/^runner: --tls-cert: ".*junk.crt" holds no certificate that can be read/) });
  });

  it("says what is wrong with a flag in one line (exit 2)", async () => {
    expect(await failure(RUNNER, ["--port", "nope"])).toEqual({ code: 2, line: 'runner: --port must be an integer from 0 to 65535, got "nope" (--help lists the flags)' });
  });
});

describe("a gateway that cannot start", () => {
  const runner = useRunnerProcess(["--port", "0"], env);

  it("says which port is in use (exit 5)", async () => {
    expect(await failure(GATEWAY, ["--port", String(takenPort), "--no-runner"])).toMatchObject({ code: 5, line: `gateway: --port ${takenPort}: the port is already in use on 127.0.0.1; stop what listens there, or choose another port (0 picks a free one)` });
  });

  it("refuses a users file it cannot read or use (exit 3), saying how to make one", async () => {
    const absent = join(scratch, "users-absent.json");
    expect(await failure(GATEWAY, ["--port", "0", "--no-runner", "--users", absent])).toEqual({
      code: 3,
      line: `gateway: --users "${absent}": cannot read it (ENOENT); create it with: npm run gateway -- users add NAME --role admin --users ${absent}`,
    });
    const broken = join(scratch, "users-broken.json");
    writeFileSync(broken, "{ nope");
    expect(await failure(GATEWAY, ["--port", "0", "--no-runner", "--users", broken])).toMatchObject({ code: 3, line: expect.stringContaining("not JSON") });
  });

  it("names the runner CA that is not PEM (exit 4)", async () => {
    expect(await failure(GATEWAY, ["--port", "0", "--runner", "https://127.0.0.1:1", "--runner-ca", certs.serverKey])).toMatchObject({ code: 4, line: expect.stringMatching(/^gateway: --runner-ca: ".*server.key" holds no certificate/) });
  });

  it("with --require-runner, exits 6 when no runner answers, or the runner refuses its token", async () => {
    const nobody = await failure(GATEWAY, ["--port", "0", "--require-runner", "--runner", `http://127.0.0.1:${await freePort()}`]);
    expect(nobody).toMatchObject({ code: EXIT_CODES.runnerUnreachable, line: expect.stringMatching(/^gateway: --runner: no runner answered within 5 s \(http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED.*\); start the runner first/) });
    const refused = await failure(GATEWAY, ["--port", "0", "--require-runner", "--runner", runner.url], { RUNNER_TOKEN: "not-the-token" });
    expect(refused).toMatchObject({ code: 6, line: expect.stringMatching(new RegExp(`^gateway: --runner ${runner.url} refuses the runner token .*; give the token it was started with`)) });
  });
});

describe("npm start that cannot start", () => {
  it("names its own flag for a port in use (exit 5), before starting either process", async () => {
    expect(await failure(LAUNCHER, ["--port", String(takenPort), "--runner-port", "0"])).toMatchObject({ code: 5, line: expect.stringMatching(new RegExp(`^start: --port ${takenPort}: the port is already in use`)) });
    expect(await failure(LAUNCHER, ["--port", "0", "--runner-port", String(takenPort)])).toMatchObject({ code: 5, line: expect.stringMatching(new RegExp(`^start: --runner-port ${takenPort}: the port is already in use`)) });
  });

  it("exits with the code of a child that cannot start, whose one line says why, and leaves no runner behind", async () => {
    const absent = join(scratch, "npm-start-users.json");
    const { code, stderr } = await runServiceToExit(LAUNCHER, ["--port", "0", "--runner-port", "0", "--users", absent], env);
    expect(code).toBe(3);
    const lines = stderr.trimEnd().split("\n");
    expect(lines.filter((line) => !line.startsWith("{"))).toEqual([expect.stringMatching(/^gateway: --users ".*npm-start-users.json": cannot read it/)]);
    const runnerPids = lines.filter((line) => line.includes('"name":"runner"')).map((line) => (JSON.parse(line) as { pid: number }).pid);
    expect(runnerPids.length).toBeGreaterThan(0);
    for (const pid of new Set(runnerPids)) expect(existsSync(`/proc/${pid}`)).toBe(false);
  });
});
