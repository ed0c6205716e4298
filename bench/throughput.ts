import { createRequire } from "node:module";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BenchClient, percentile, report, round, runnerClient, startSystem } from "./support.js";

/** `cat` of a 64 MiB file in a pty: straight from node-pty (the ceiling), through the runner's Attach, and through runner + gateway + WebSocket. */
const FILE_BYTES = 64 * 1024 * 1024;
const LINE = `${"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ~".slice(0, 63)}\n`;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

const directory = mkdtempSync(join(tmpdir(), "bench-cat-"));
const file = join(directory, "data.txt");
writeFileSync(file, LINE.repeat(FILE_BYTES / LINE.length));
// Under a pty each \n leaves as \r\n.
const EXPECTED = FILE_BYTES + FILE_BYTES / LINE.length;

type Run = { seconds: number; bytes: number };

async function nodePtyDirect(): Promise<Run> {
  const pty = createRequire(import.meta.url)("node-pty") as typeof import("node-pty");
  const started = performance.now();
  return new Promise((done) => {
    let bytes = 0;
    const term = pty.spawn("cat", [file], { cols: 120, rows: 40, encoding: null as unknown as string });
    term.onData((data) => (bytes += data.length));
    term.onExit(() => done({ seconds: (performance.now() - started) / 1000, bytes }));
  });
}

async function throughRunner(url: string): Promise<Run> {
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

async function throughGateway(url: string, run: number): Promise<Run> {
  const client = await BenchClient.open(url);
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
  return {
    mbPerSecondMedian: round(percentile(rates, 50)),
    mbPerSecondBest: round(Math.max(...rates)),
    bytesLostPerRun: runs.map((run) => EXPECTED - run.bytes),
  };
}

const direct: Run[] = [];
for (let i = 0; i < RUNS; i++) direct.push(await nodePtyDirect());
const system = await startSystem({ runnerArgs: ["--retain-bytes", String(4 * 1024 * 1024)] });
const runner: Run[] = [];
const gateway: Run[] = [];
try {
  for (let i = 0; i < RUNS; i++) runner.push(await throughRunner(system.runner.address));
  for (let i = 0; i < RUNS; i++) gateway.push(await throughGateway(system.gateway.address, i));
} finally {
  await system.stop();
}
const a = summary(direct);
const b = summary(runner);
const c = summary(gateway);
report({
  benchmark: "throughput",
  description: "cat of a 64 MiB file in a pty; MB/s from spawn to exit (median of runs) and output bytes lost in each run",
  expectedBytes: EXPECTED,
  runs: RUNS,
  nodePtyDirect: a,
  runnerAttach: { ...b, ratioToDirect: round(b.mbPerSecondMedian / a.mbPerSecondMedian) },
  gatewayWebSocket: { ...c, ratioToDirect: round(c.mbPerSecondMedian / a.mbPerSecondMedian) },
  targets: { runnerAttachRatio: 0.9, gatewayWebSocketRatio: 0.8, bytesLost: 0 },
});
