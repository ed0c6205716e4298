import { catFlood, createFloodFile } from "./measures/cat-flood.js";
import { spawnRawBytes } from "./raw-pty.js";
import { cpuDuring, percentile, report, round, runnerClient } from "./support.js";
import { product } from "./systems/product.js";
import { ratioVerdict, valueVerdict } from "./targets.js";

/**
 * `cat` of a 64 MiB file in a pty: straight from node-pty in the bench's process (the ceiling),
 * through the runner's Attach, and typed into bash through runner + gateway + WebSocket
 * (measures/cat-flood.ts, as the peers bench runs it); MB/s, bytes lost, and the CPU each process
 * spent per MB (the bench's own client counted apart from the services).
 */
const FILE_BYTES = 64 * 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/**
 * Unmeasured runs before each path's measured ones: a service's first flood pays for compiling its
 * output path and growing its heap, which a long-running service has done long before.
 */
const WARMUP_RUNS = 1;

const { file, expectedBytes: EXPECTED } = createFloodFile(FILE_BYTES);

/** CPU budgets per MB of output from the issue: the runner's whole share, and the gateway's. */
const RUNNER_MS_PER_MB = 15;
const GATEWAY_MS_PER_MB = 18;

type Run = { seconds: number; bytes: number; cpuMs: Record<string, number> };

async function nodePtyDirect(): Promise<Omit<Run, "cpuMs">> {
  const started = performance.now();
  return new Promise((done) => {
    let bytes = 0;
    const term = spawnRawBytes("cat", [file]);
    term.onData((data) => (bytes += data.length));
    term.onExit(() => done({ seconds: (performance.now() - started) / 1000, bytes }));
  });
}

async function throughRunner(url: string): Promise<Omit<Run, "cpuMs">> {
  const client = runnerClient(url);
  const started = performance.now();
  const { terminal } = await client.spawn({ argv: ["cat", file], cols: 120, rows: 40 });
  let bytes = 0;
  for await (const event of client.attach({ id: terminal!.id, follow: true })) {
    if (event.event.case === "output") bytes += event.event.value.data.length;
  }
  const seconds = (performance.now() - started) / 1000;
  await client.close({ id: terminal!.id });
  return { seconds, bytes };
}

function summary(runs: Run[]) {
  const rates = runs.map((run) => EXPECTED / 1e6 / run.seconds);
  const cpuMsPerMB: Record<string, number> = {};
  for (const name of Object.keys(runs[0]!.cpuMs)) {
    cpuMsPerMB[name] = round(percentile(runs.map((run) => run.cpuMs[name]! / (EXPECTED / 1e6)), 50));
  }
  return {
    mbPerSecondMedian: round(percentile(rates, 50)),
    mbPerSecondBest: round(Math.max(...rates)),
    bytesLostPerRun: runs.map((run) => EXPECTED - run.bytes),
    cpuMsPerMB,
  };
}

const measured = async (pids: Record<string, number>, work: () => Promise<Omit<Run, "cpuMs">>): Promise<Run> => {
  const { result, cpuMs } = await cpuDuring(pids, work);
  return { ...result, cpuMs };
};

/** WARMUP_RUNS unmeasured runs of `run`, then RUNS measured ones. */
async function runs(run: () => Promise<Run>): Promise<Run[]> {
  for (let i = 0; i < WARMUP_RUNS; i++) await run();
  const measuredRuns: Run[] = [];
  for (let i = 0; i < RUNS; i++) measuredRuns.push(await run());
  return measuredRuns;
}

const benchPid = process.pid;
const direct = await runs(() => measured({ benchProcess: benchPid }, nodePtyDirect));
const system = await product({ runnerArgs: ["--retain-bytes", String(4 * 1024 * 1024)] });
let runner: Run[];
let gateway: Run[];
try {
  const runnerPid = system.processes().runner![0]!;
  runner = await runs(() => measured({ runner: runnerPid, benchClient: benchPid }, () => throughRunner(system.runnerAddress)));
  gateway = await runs(async () => {
    const { seconds, bytes, cpu } = await catFlood(system, file);
    return { seconds, bytes, cpuMs: { ...cpu.server, benchWebSocketClient: cpu.clients.benchProcess! } };
  });
} finally {
  await system.stop();
}
const a = summary(direct);
const b = summary(runner);
const c = summary(gateway);
const lost = [...b.bytesLostPerRun, ...c.bytesLostPerRun];
report({
  benchmark: "throughput",
  description: "cat of a 64 MiB file in a pty; MB/s from spawn to exit (through the gateway: from typing the command into bash until its last line arrived), median of runs after an unmeasured warm-up run per path; output bytes lost in each run, CPU ms per MB of output per process (median of runs)",
  expectedBytes: EXPECTED,
  runs: RUNS,
  warmupRunsPerPath: WARMUP_RUNS,
  nodePtyDirect: a,
  runnerAttach: {
    ...b,
    ratioToDirect: ratioVerdict(b.mbPerSecondMedian, a.mbPerSecondMedian, ">=", 0.7),
    runnerCpuMsPerMB: valueVerdict(b.cpuMsPerMB.runner!, "<=", RUNNER_MS_PER_MB),
  },
  gatewayWebSocket: {
    ...c,
    ratioToDirect: ratioVerdict(c.mbPerSecondMedian, a.mbPerSecondMedian, ">=", 0.5),
    runnerCpuMsPerMB: valueVerdict(c.cpuMsPerMB.runner!, "<=", RUNNER_MS_PER_MB),
    gatewayCpuMsPerMB: valueVerdict(c.cpuMsPerMB.gateway!, "<=", GATEWAY_MS_PER_MB),
  },
  bytesLost: { total: lost.reduce((x, y) => x + y, 0), target: "== 0", met: lost.every((n) => n === 0) },
});
