import { rmSync } from "node:fs";
import type { Client } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { TerminalMode, type TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { eventually } from "../support/eventually.js";
import { scratchHome } from "../support/scratch-home.js";
import { isGone, killAll, processTable } from "../support/processes.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";

const TOKEN = "crash-test-token";
/** How long the kernel (ptys) and the hangup sentinel (pipes) get to end a dead runner's terminals. */
const HANGUP_WAIT_MS = 5_000;

type RunnerClient = Client<typeof TerminalService>;

let runner: RunnerProcess | undefined;
let home: string | undefined;
const toKill = new Set<number>();
afterEach(async () => {
  await runner?.stop("SIGKILL");
  killAll(toKill);
  toKill.clear();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Reads a terminal's output until each pattern has matched; returns the first group of each. */
async function pidsFrom(client: RunnerClient, id: string, patterns: RegExp[]): Promise<number[]> {
  let text = "";
  for await (const event of client.attach({ id, follow: true })) {
    if (event.event.case === "output") text += Buffer.from(event.event.value.data).toString();
    if (patterns.every((pattern) => pattern.test(text))) return patterns.map((pattern) => Number(pattern.exec(text)![1]));
    if (event.event.case === "exited") break;
  }
  throw new Error(`terminal ${id} ended before printing ${patterns.join(", ")}: ${JSON.stringify(text.slice(-300))}`);
}

/** An interactive bash under a pty that has run `line`; resolves with the pids the line printed (NAME=pid). */
async function bashRunning(client: RunnerClient, line: string, names: string[]): Promise<{ shell: number; printed: number[] }> {
  const { terminal } = await client.spawn({ mode: TerminalMode.PTY });
  // Typed ahead: the pty keeps it until bash reads its first line.
  await client.write({ id: terminal!.id, data: Buffer.from(`${line}\r`) });
  const printed = await pidsFrom(client, terminal!.id, names.map((name) => new RegExp(`${name}=(\\d+)\\r?\\n`)));
  return { shell: terminal!.pid, printed };
}

/** A pipe terminal running a sh line; resolves with the pids it printed (NAME=pid). */
async function pipeRunning(client: RunnerClient, line: string, names: string[]): Promise<{ shell: number; printed: number[] }> {
  const { terminal } = await client.spawn({ argv: ["/bin/sh", "-c", line], mode: TerminalMode.PIPES });
  const printed = await pidsFrom(client, terminal!.id, names.map((name) => new RegExp(`${name}=(\\d+)\\n`)));
  return { shell: terminal!.pid, printed };
}

describe("a runner that is killed with SIGKILL", () => {
  it("leaves nothing of its terminals running but what detached on purpose (nohup, setsid, disown)", async () => {
    home = scratchHome("crash-home-");
    runner = await startRunnerProcess(["--port", "0", "--token", TOKEN], { SHELL: "/bin/bash", HOME: home, RUNNER_TOKEN: undefined }, { compiled: true });
    const client = runner.client(TOKEN);

    const ptyForeground = await bashRunning(client, "sh -c 'echo FG=$$; exec sleep 600'", ["FG"]);
    const ptyBackground = await bashRunning(client, "sleep 600 & echo BG=$!", ["BG"]);
    const ptyNohup = await bashRunning(client, "nohup sleep 600 >/dev/null 2>&1 & echo NOHUP=$!", ["NOHUP"]);
    const ptySetsid = await bashRunning(client, "setsid sh -c 'echo SETSID=$$; exec sleep 600'", ["SETSID"]);
    const ptyDisown = await bashRunning(client, "sleep 600 & echo DISOWN=$!; disown", ["DISOWN"]);
    const pipeSleep = await pipeRunning(client, "echo SLEEP=$$; exec sleep 600", ["SLEEP"]);
    const pipeJobs = await pipeRunning(client, "sleep 600 & echo JOB=$!; echo SH=$$; sleep 600", ["JOB", "SH"]);
    const pipeNohup = await pipeRunning(client, "nohup sleep 600 >/dev/null 2>&1 & echo NOHUP=$!; exec sleep 600", ["NOHUP"]);
    const pipeSetsid = await pipeRunning(client, "setsid -f sh -c 'echo SETSID=$$; exec sleep 600'; exec sleep 600", ["SETSID"]);

    const detached = new Set([ptyNohup.printed[0]!, ptySetsid.printed[0]!, ptyDisown.printed[0]!, pipeNohup.printed[0]!, pipeSetsid.printed[0]!]);
    const terminals = [ptyForeground, ptyBackground, ptyNohup, ptySetsid, ptyDisown, pipeSleep, pipeJobs, pipeNohup, pipeSetsid];
    // Every process of every terminal's session (each terminal's first process leads one), and what they printed.
    const sessions = new Set(terminals.map(({ shell }) => shell));
    const started = new Set([...processTable().filter((entry) => sessions.has(entry.session)).map((entry) => entry.pid), ...terminals.flatMap(({ printed }) => printed)]);
    for (const pid of started) toKill.add(pid);
    expect(started.size).toBeGreaterThanOrEqual(16);
    for (const pid of started) expect(isGone(pid), `process ${pid} runs before the crash`).toBe(false);

    await runner.stop("SIGKILL");
    runner = undefined;

    const shouldEnd = [...started].filter((pid) => !detached.has(pid));
    const ended = await eventually(() => shouldEnd.every(isGone), HANGUP_WAIT_MS);
    expect(ended ? [] : shouldEnd.filter((pid) => !isGone(pid)), "processes of terminals still running after the runner died").toEqual([]);
    for (const pid of detached) expect(isGone(pid), `detached process ${pid} survives`).toBe(false);
  });
});
