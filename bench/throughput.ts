import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnRawBytes } from "./raw-pty.js";
import { BenchClient, cpuDuring, percentile, report, round, runnerClient, startSystem } from "./support.js";
import { ratioVerdict, valueVerdict } from "./targets.js";

/**
 * `cat` of a 64 MiB file in a pty: straight from node-pty in the bench's process (the ceiling),
 * through the runner's Attach, and through runner + gateway + WebSocket; MB/s, bytes lost, and the
 * CPU each process spent per MB (the bench's own client counted apart from the services).
 */
const FILE_BYTES = 64 * 1024 * 1024;
const LINE = `${"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ~".slice(0, 63)}\n`;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/**
 * Unmeasured runs before each path's measured ones: a service's first flood pays for compiling its
 * output path and growing its heap, which a long-running service has done long before.
 */
const WARMUP_RUNS = 1;

const directory = mkdtempSync(join(tmpdir(), "bench-cat-"));
const file = join(directory, "data.txt");
writeFileSync(file, LINE.repeat(FILE_BYTES / LINE.length));
// Under a pty each \n leaves as \r\n.
const EXPECTED = FILE_BYTES + FILE_BYTES / LINE.length;

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

async function throughGateway(url: string, run: number): Promise<Omit<Run, "cpuMs">> {
  const client = await BenchClient.connect(url);
  const uri = `ahp-terminal:/cat-${run}`;
  await client.call("createTerminal", { channel: uri, cols: 120, rows: 40 });
  let text = "";
  let bytes = 0;
  let started = 0;
  const exited = new Promise<void>((done) => {
    client.onAction = (envelope) => {
      if (envelope.channel !== uri) return;
      if (envelope.action.type === "terminal/data") {
        if (text.length < 4096) text += envelope.action.data;
        bytes += envelope.action.data.length;
      }
      if (envelope.action.type === "terminal/exited") done();
    };
  });
  await client.call("subscribe", { channel: uri });
  await new Promise((done) => setTimeout(done, 200));
  const command = `exec cat ${file}\r`;
  started = performance.now();
  client.input(uri, command);
  await exited;
  const seconds = (performance.now() - started) / 1000;
  // What came before the file's first line (prompt and the echoed command) is not the file.
  const prefix = text.indexOf(LINE.slice(0, 20));
  await client.call("disposeTerminal", { channel: uri });
  client.close();
  return { seconds, bytes: bytes - Math.max(0, prefix) };
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

/** WARMUP_RUNS unmeasured runs of `work`, then RUNS measured ones. */
async function runs(pids: Record<string, number>, work: (run: number) => Promise<Omit<Run, "cpuMs">>): Promise<Run[]> {
  for (let i = 0; i < WARMUP_RUNS; i++) await work(-1 - i);
  const measuredRuns: Run[] = [];
  for (let i = 0; i < RUNS; i++) measuredRuns.push(await measured(pids, () => work(i)));
  return measuredRuns;
}

const benchPid = process.pid;
const direct = await runs({ benchProcess: benchPid }, nodePtyDirect);
const system = await startSystem({ runnerArgs: ["--retain-bytes", String(4 * 1024 * 1024)] });
let runner: Run[];
let gateway: Run[];
try {
  const runnerPid = system.runner.child.pid!;
  const gatewayPid = system.gateway.child.pid!;
  runner = await runs({ runner: runnerPid, benchClient: benchPid }, () => throughRunner(system.runner.address));
  gateway = await runs({ runner: runnerPid, gateway: gatewayPid, benchWebSocketClient: benchPid }, (run) => throughGateway(system.gateway.address, run));
} finally {
  await system.stop();
}
const a = summary(direct);
const b = summary(runner);
const c = summary(gateway);
const lost = [...b.bytesLostPerRun, ...c.bytesLostPerRun];
report({
  benchmark: "throughput",
  description: "cat of a 64 MiB file in a pty; MB/s from spawn to exit (median of runs, after an unmeasured warm-up run per path), output bytes lost in each run, CPU ms per MB of output per process (median of runs)",
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
