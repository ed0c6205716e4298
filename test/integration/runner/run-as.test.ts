import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { runToExit, useTestRunner, waitForOutput, type TestRunner } from "./harness.js";
import { ACCOUNTS_SKIP_REASON, CAN_SWITCH_ACCOUNTS, createAccount, removeAccount, type TestAccount } from "./test-accounts.js";

if (ACCOUNTS_SKIP_REASON) console.warn(ACCOUNTS_SKIP_REASON);

const suffix = `${process.pid}`.slice(-5);
const GROUP = `ahpt${suffix}g`;
let alice: TestAccount;
let bob: TestAccount;
let runner: TestRunner;
let secrets: string;

/** Runs a shell line as `account` and returns everything it printed. */
async function runAs(account: string, line: string, mode = TerminalMode.PTY): Promise<string> {
  const { terminal } = await runner.grpc.spawn({ argv: ["/bin/sh", "-c", line], runAs: account, mode });
  return (await runToExit(runner.grpc, terminal!.id)).output.toString();
}

const code = async (call: Promise<unknown>): Promise<Code | undefined> => call.then(() => undefined, (err: unknown) => ConnectError.from(err).code);

describe.skipIf(!CAN_SWITCH_ACCOUNTS)("terminals started as Unix accounts", () => {
  beforeAll(() => {
    execFileSync("groupadd", [GROUP]);
    alice = createAccount(`ahpt${suffix}a`, "/bin/bash", GROUP);
    bob = createAccount(`ahpt${suffix}b`, "/bin/sh", GROUP);
    secrets = mkdtempSync(join(tmpdir(), "runner-secrets-"));
    writeFileSync(join(secrets, "runner-token"), "token-in-a-file\n", { mode: 0o600 });
  });
  // Registered before the runners, so it runs after both have closed.
  afterAll(() => {
    for (const account of [alice, bob]) removeAccount(account);
    execFileSync("groupdel", [GROUP], { stdio: "ignore" });
    rmSync(secrets, { recursive: true, force: true });
  });
  const env = { ...process.env, RUNNER_TOKEN: "token-in-the-environment", PATH: "/usr/bin:/bin", HOME: "/root" };
  runner = useTestRunner({ env, runAs: { allowed: true, allowRoot: false }, processNice: 10 });
  const closedRunner = useTestRunner({ env });

  it("run with the account's uid, gid and groups (none of the runner's), its HOME and a short environment, in its home, on a pty and on pipes", async () => {
    const groupId = Number(execFileSync("getent", ["group", GROUP], { encoding: "utf8" }).split(":")[2]);
    for (const mode of [TerminalMode.PTY, TerminalMode.PIPES]) {
      const output = await runAs(alice.name, 'echo "uid=$(id -u) gid=$(id -g) groups=$(id -G) home=$HOME user=$USER pwd=$(pwd)"; env', mode);
      expect(output).toContain(`uid=${alice.uid} gid=${alice.gid} groups=${alice.gid} ${groupId} home=${alice.home} user=${alice.name} pwd=${alice.home}`);
      expect(output).not.toMatch(/token-in-the-environment|RUNNER_TOKEN/);
    }
    // Its own terminal is its own, also by name.
    expect(await runAs(alice.name, 'echo by-name > "$(tty)" && echo opened-by-name')).toContain("opened-by-name");
    const info = (await runner.grpc.list({})).terminals.find((terminal) => terminal.runAs === alice.name);
    expect(info?.argv).toEqual(["/bin/sh", "-c", expect.any(String)]);
  });

  it("cannot take back the CPU priority the runner gave their processes", async () => {
    const output = await runAs(alice.name, 'renice -n 0 -p $$ 2>&1; echo "nice=$(nice)"');
    expect(output).toMatch(/Permission denied/);
    expect(output).toContain(`nice=${Math.min(19, getPriority(0) + 10)}`);
  });

  it("start the account's login shell when none is given, with shell integration it can read", async () => {
    const { terminal } = await runner.grpc.spawn({ runAs: alice.name });
    expect(terminal).toMatchObject({ runAs: alice.name, commandDetection: true, cwd: alice.home });
    expect(terminal!.argv[0]).toBe("/bin/bash");
    await runner.grpc.write({ id: terminal!.id, data: Buffer.from("echo marker-$((6*7)) $0\r") });
    expect(await waitForOutput(runner.grpc, terminal!.id, /marker-42 /)).toMatch(/marker-42 \S*bash/);
    await runner.grpc.close({ id: terminal!.id });
    const { terminal: plain } = await runner.grpc.spawn({ runAs: bob.name, command: "echo $SHELL" });
    expect((await runToExit(runner.grpc, plain!.id)).output.toString()).toContain("/bin/sh");
  });

  it("cannot read the runner's environment, memory or token file, nor reach another account's terminal", async () => {
    const { terminal: victim } = await runner.grpc.spawn({ runAs: bob.name, argv: ["/bin/sh", "-c", "readlink /proc/self/fd/0; sleep 30"] });
    const tty = (await waitForOutput(runner.grpc, victim!.id, /\/dev\/pts\/\d+/)).match(/\/dev\/pts\/\d+/)![0];
    const pid = victim!.pid;
    const attack = [
      `cat /proc/${process.pid}/environ`,
      `head -c 1 /proc/${process.pid}/mem`,
      `cat ${join(secrets, "runner-token")}`,
      `cat /proc/${pid}/environ`,
      `ls /proc/${pid}/fd/`,
      `echo hijack > ${tty}`,
      `cat ${tty}`,
      `kill -0 ${pid}`,
    ];
    const output = await runAs(alice.name, attack.map((line) => `${line} >/dev/null 2>&1 && echo "ALLOWED: ${line}" || echo "refused: ${line}"`).join("; "));
    for (const line of attack) expect(output).toContain(`refused: ${line}`);
    expect(output).not.toContain("ALLOWED");
    await runner.grpc.close({ id: victim!.id });
  });

  it("are refused without --allow-run-as, for uid 0 without --allow-run-as-root, and for an unknown account", async () => {
    expect(await code(closedRunner.grpc.spawn({ argv: ["id"], runAs: alice.name }))).toBe(Code.PermissionDenied);
    expect(await code(runner.grpc.spawn({ argv: ["id"], runAs: "root" }))).toBe(Code.PermissionDenied);
    expect(await code(runner.grpc.spawn({ argv: ["id"], runAs: `nobody-${suffix}-x` }))).toBe(Code.InvalidArgument);
    expect(await code(runner.grpc.spawn({ argv: ["id"], runAs: "a;b" }))).toBe(Code.InvalidArgument);
  });

  it("check a client-named shell at spawn: only a file nobody but root or the account can change runs", async () => {
    const own = join(alice.home, "bin");
    mkdirSync(own);
    chownSync(own, alice.uid, alice.gid);
    const good = join(own, "shell");
    copyFileSync("/bin/sh", good);
    chownSync(good, alice.uid, alice.gid);
    chmodSync(good, 0o755);
    const spawnWith = (shell: string) => runner.grpc.spawn({ runAs: alice.name, shell, command: "echo checked-shell-ran", checkShell: true });
    const { terminal } = await spawnWith(good);
    expect((await runToExit(runner.grpc, terminal!.id)).output.toString()).toContain("checked-shell-ran");

    chmodSync(good, 0o775);
    expect(await code(spawnWith(good))).toBe(Code.FailedPrecondition);
    chmodSync(good, 0o755);
    // A directory the account's group can write: anyone in it could swap the file between check and exec.
    chmodSync(own, 0o775);
    await expect(spawnWith(good)).rejects.toThrow(/writable by its group or others/);
    chmodSync(own, 0o755);
    chownSync(good, bob.uid, bob.gid);
    await expect(spawnWith(good)).rejects.toThrow(/neither root nor the account/);
    rmSync(good);
    await expect(spawnWith(good)).rejects.toThrow(/does not exist/);
    expect(await code(spawnWith("relative/sh"))).toBe(Code.InvalidArgument);
  });
});
