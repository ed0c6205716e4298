import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../lib/logger.js";
import { HANGUP_SENTINEL_SCRIPT, HangupSentinel, type HangupWatch } from "../../../services/runner/process/hangup-sentinel.js";
import { spawnPipes } from "../../../services/runner/process/pipes.js";
import { eventually } from "../../support/eventually.js";
import { isGone, killAll, processTable } from "../../support/processes.js";
import { ACCOUNTS_SKIP_REASON, CAN_SWITCH_ACCOUNTS, createAccount, removeAccount, type TestAccount } from "./test-accounts.js";

if (ACCOUNTS_SKIP_REASON) console.warn(ACCOUNTS_SKIP_REASON);

const log = createLogger("silent", "runner");
const started = new Set<number>();
const sentinels: HangupSentinel[] = [];
afterEach(() => {
  for (const sentinel of sentinels.splice(0)) sentinel.close();
  killAll(started);
  started.clear();
});

/** A process leading a group of its own (as a pipe terminal's first process does), started by `argv`. */
function groupLeader(argv: string[]): number {
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: "ignore" });
  started.add(child.pid!);
  return child.pid!;
}

/** The pid of the sentinel a HangupSentinel runs, found as this process's child running the script. */
function sentinelPid(): number | undefined {
  return processTable().find((entry) => entry.ppid === process.pid && entry.state !== "Z" && readFileSync(`/proc/${entry.pid}/cmdline`, "utf8").includes(HANGUP_SENTINEL_SCRIPT))?.pid;
}

describe("the hangup sentinel of pipe terminals", () => {
  it("hangs up every watched group once its input ends, stopped members too; nohup, and what it was told to forget, live on", async () => {
    const sentinel = new HangupSentinel(log);
    sentinels.push(sentinel);
    const plain = groupLeader(["sleep", "600"]);
    const stopped = groupLeader(["sleep", "600"]);
    process.kill(stopped, "SIGSTOP");
    const nohup = groupLeader(["nohup", "sleep", "600"]);
    const forgotten = groupLeader(["sleep", "600"]);
    for (const pgid of [plain, stopped, nohup, forgotten]) sentinel.watch(pgid);
    sentinel.forget(forgotten);
    expect(await eventually(() => sentinelPid() !== undefined)).toBe(true);
    sentinel.close();
    expect(await eventually(() => isGone(plain) && isGone(stopped))).toBe(true);
    expect(await eventually(() => sentinelPid() === undefined)).toBe(true);
    expect([isGone(nohup), isGone(forgotten)]).toEqual([false, false]);
  });

  it("leaves a group alone once its number names another process (a start time other than the one it was given)", async () => {
    const reused = groupLeader(["sleep", "600"]);
    const watched = groupLeader(["sleep", "600"]);
    const stat = readFileSync(`/proc/${watched}/stat`, "utf8");
    const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    const script = spawn("/bin/sh", [HANGUP_SENTINEL_SCRIPT], { stdio: ["pipe", "ignore", "inherit"] });
    script.stdin.end(`+${reused} 12345\n+${watched} ${startTime}\n`);
    await new Promise((resolve) => script.on("exit", resolve));
    expect(await eventually(() => isGone(watched))).toBe(true);
    expect(isGone(reused)).toBe(false);
  });

  it("is replaced when it is killed, and the new one watches every group still watched", async () => {
    const sentinel = new HangupSentinel(log);
    sentinels.push(sentinel);
    const leader = groupLeader(["sleep", "600"]);
    sentinel.watch(leader);
    expect(await eventually(() => sentinelPid() !== undefined)).toBe(true);
    const first = sentinelPid()!;
    process.kill(first, "SIGKILL");
    expect(await eventually(() => (sentinelPid() ?? first) !== first, 3_000)).toBe(true);
    expect(isGone(leader)).toBe(false);
    sentinel.close();
    expect(await eventually(() => isGone(leader))).toBe(true);
  });

  it("forgets a pipe terminal's group only once no process is left in it", async () => {
    const calls: string[] = [];
    const recorder: HangupWatch = { watch: (pgid) => calls.push(`watch ${pgid}`), forget: (pgid) => calls.push(`forget ${pgid}`) };
    const spec = { cwd: "/", env: { PATH: "/usr/bin:/bin" }, cols: 80, rows: 24 };
    const quick = await new Promise<number>((resolve) => {
      const terminal = spawnPipes({ ...spec, file: "/bin/true", args: [] }, { onData: () => {}, onExit: () => resolve(terminal.pid) }, recorder);
    });
    expect(calls).toEqual([`watch ${quick}`, `forget ${quick}`]);
    calls.length = 0;
    const leaving = await new Promise<number>((resolve) => {
      const terminal = spawnPipes({ ...spec, file: "/bin/sh", args: ["-c", "sleep 0.5 >/dev/null 2>&1 & exit 0"] }, { onData: () => {}, onExit: () => resolve(terminal.pid) }, recorder);
    });
    expect(calls).toEqual([`watch ${leaving}`]);
    // A member reparented to init is gone once init reaps it, which some inits do only every few seconds.
    expect(await eventually(() => calls.length === 2, 10_000)).toBe(true);
    expect(calls[1]).toBe(`forget ${leaving}`);
  });
});

describe.skipIf(!CAN_SWITCH_ACCOUNTS)("the hangup sentinel, against terminals of other accounts", () => {
  let ana: TestAccount;
  beforeAll(() => {
    ana = createAccount(`ahph${`${process.pid}`.slice(-5)}a`, "/bin/sh");
  });
  afterAll(() => removeAccount(ana));

  it("cannot be signalled by them", async () => {
    const sentinel = new HangupSentinel(log);
    sentinels.push(sentinel);
    sentinel.watch(groupLeader(["sleep", "600"]));
    expect(await eventually(() => sentinelPid() !== undefined)).toBe(true);
    const pid = sentinelPid()!;
    const attempt = (): string => {
      try {
        return execFileSync("setpriv", [`--reuid=${ana.uid}`, `--regid=${ana.gid}`, "--init-groups", "kill", "-KILL", String(pid)], { encoding: "utf8", stdio: "pipe" });
      } catch (err) {
        return String((err as { stderr?: string }).stderr);
      }
    };
    expect(attempt()).toMatch(/not permitted/);
    expect(isGone(pid)).toBe(false);
  });
});
