import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { FollowRequestSchema } from "../gen/terminal/v1/terminal_pb.js";
import { busyLoop } from "./measures/busy-terminals.js";
import { ROOT, cpuSecondsOf, machine, report, round, runnerClient, sleep, startRunner } from "./support.js";

/**
 * Where the runner's CPU goes with many busy terminals, beside node-pty reading the same load in a
 * process of its own, in one run. TERMINALS bash terminals each write about 40 KB/s (the peers
 * bench's load: 4,000 characters, then a 0.1 s `read -t`, bash builtins only), read (a) by node-pty
 * alone, (b) by the runner with nobody following them (its pty reads, the log, the shell-mark
 * scanner), (c) by the runner with every terminal followed on one Follow stream, as a gateway follows
 * them (adding the log readers, batching, framing and HTTP/2). CPU ms and minor page faults per MB of
 * output for each; the difference between (b) and (c) is what following costs.
 */
const TERMINALS = Number(process.env.BENCH_TERMINALS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_SECONDS ?? 5) * 1000;
/** Time for the terminals to start and their producers to get going before a window. */
const SETTLE_MS = 3_000;
/** Each round's producers outlive its windows (two, a settle apart, with margin). */
const PRODUCER_SECONDS = Math.ceil((3 * SETTLE_MS + 2 * WINDOW_MS) / 1000) + 5;
const PRODUCER = busyLoop(PRODUCER_SECONDS);

/** Minor page faults of a process so far (/proc/PID/stat): a fault per fresh page it touches. */
function minorFaultsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[7]);
}

interface Window {
  mb: number;
  cpuMs: number;
  faults: number;
}

/** CPU, faults and output MB of `pid` over one window; `bytes` reads how much output there is so far. */
async function measure(pid: number, bytes: () => Promise<number>): Promise<Window> {
  const [cpu, faults, from] = [cpuSecondsOf(pid), minorFaultsOf(pid), await bytes()];
  await sleep(WINDOW_MS);
  const [cpuAfter, faultsAfter, to] = [cpuSecondsOf(pid), minorFaultsOf(pid), await bytes()];
  return { mb: (to - from) / 1e6, cpuMs: (cpuAfter - cpu) * 1000, faults: faultsAfter - faults };
}

async function nodePtyWindow(): Promise<Window> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/pty-reader-process.ts", String(TERMINALS), PRODUCER], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const counts = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const bytes = async (): Promise<number> => {
    child.stdin!.write("\n");
    return Number((await counts.next()).value);
  };
  await sleep(SETTLE_MS);
  const window = await measure(child.pid!, bytes);
  child.stdin!.end();
  await new Promise((done) => child.once("exit", done));
  return window;
}

async function runnerWindows(): Promise<{ unfollowed: Window; followed: Window }> {
  const runner = await startRunner("/bin/bash");
  try {
    const client = runnerClient(runner.address);
    const ids: string[] = [];
    for (let i = 0; i < TERMINALS; i++) ids.push((await client.spawn({ argv: ["/bin/bash", "--norc", "-c", PRODUCER] })).terminal!.id);
    const logged = async (): Promise<number> => (await client.list({})).terminals.reduce((sum, terminal) => sum + Number(terminal.endOffset), 0);
    await sleep(SETTLE_MS);
    const unfollowed = await measure(runner.child.pid!, logged);
    const requests = createWritableIterable<MessageInitShape<typeof FollowRequestSchema>>();
    let delivered = 0;
    const reading = (async () => {
      for await (const response of client.follow(requests)) {
        for (const { kind } of response.events) if (kind.case === "event" && kind.value.event.case === "output") delivered += kind.value.event.value.data.length;
      }
    })();
    ids.forEach((id, i) => void requests.write({ action: { case: "start", value: { followId: i + 1, attach: { id, fromOffset: 0n, follow: true, stripShellMarks: true } } } }));
    await sleep(SETTLE_MS);
    const followed = await measure(runner.child.pid!, async () => delivered);
    requests.close();
    await reading.catch(() => undefined);
    return { unfollowed, followed };
  } finally {
    await runner.stop();
  }
}

const windows: Record<"nodePty" | "unfollowed" | "followed", Window[]> = { nodePty: [], unfollowed: [], followed: [] };
for (let round = 0; round < ROUNDS; round++) {
  // Alternated, so a machine that drifts affects both.
  const order = round % 2 === 0 ? ["nodePty", "runner"] : ["runner", "nodePty"];
  for (const which of order) {
    if (which === "nodePty") windows.nodePty.push(await nodePtyWindow());
    else {
      const { unfollowed, followed } = await runnerWindows();
      windows.unfollowed.push(unfollowed);
      windows.followed.push(followed);
    }
  }
}

const perMB = (list: Window[]) => {
  const mb = list.reduce((sum, w) => sum + w.mb, 0);
  return { mbPerSecond: round(mb / ((list.length * WINDOW_MS) / 1000)), cpuMsPerMB: round(list.reduce((sum, w) => sum + w.cpuMs, 0) / mb), minorFaultsPerMB: round(list.reduce((sum, w) => sum + w.faults, 0) / mb, 0) };
};
const figures = { nodePtyReader: perMB(windows.nodePty), runnerUnfollowed: perMB(windows.unfollowed), runnerFollowed: perMB(windows.followed) };
report({
  benchmark: "runner-read-cost",
  description: `${TERMINALS} bash terminals of about 40 KB/s each, ${ROUNDS} rounds of ${WINDOW_MS / 1000} s windows: node-pty alone in a process, the runner unfollowed, the runner with every terminal followed on one Follow stream`,
  ...figures,
  ratios: {
    unfollowedToNodePty: round(figures.runnerUnfollowed.cpuMsPerMB / figures.nodePtyReader.cpuMsPerMB),
    followedToNodePty: round(figures.runnerFollowed.cpuMsPerMB / figures.nodePtyReader.cpuMsPerMB),
    followingCostMsPerMB: round(figures.runnerFollowed.cpuMsPerMB - figures.runnerUnfollowed.cpuMsPerMB),
  },
  rounds: windows,
  machine: machine(),
});
process.exit(0);
