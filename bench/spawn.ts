import { spawnRaw } from "./raw-pty.js";
import { BASH_INTEGRATION, BenchClient, percentile, report, round, shellEnv, startSystem } from "./support.js";
import { ratioVerdict } from "./targets.js";

/**
 * createTerminal until the first prompt byte reaches the WebSocket client, against node-pty in the
 * bench's own process spawning the same bash the same way (the runner's integration script as its
 * rcfile, the same scratch HOME), measured in the same run.
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const SHELL = "/bin/bash";

function direct(): Promise<number> {
  const started = performance.now();
  return new Promise((done) => {
    const term = spawnRaw(SHELL, ["--rcfile", BASH_INTEGRATION], shellEnv(SHELL), { cols: 80, rows: 24 });
    let first = true;
    term.onData(() => {
      if (!first) return;
      first = false;
      done(performance.now() - started);
      term.kill();
    });
  });
}

const baseline: number[] = [];
for (let i = 0; i < RUNS; i++) baseline.push(await direct());
const system = await startSystem({ shell: SHELL });
try {
  const client = await BenchClient.connect(system.gateway.address);
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const uri = `ahp-terminal:/spawn-${i}`;
    let first!: () => void;
    const firstByte = new Promise<void>((done) => (first = done));
    client.onData(uri, () => first());
    const started = performance.now();
    // Subscribing in the same breath as creating: the first byte arrives live, not in the snapshot.
    await client.call("createTerminal", { channel: uri, cols: 80, rows: 24 });
    const { snapshot } = await client.call("subscribe", { channel: uri });
    if (snapshot.state.content.length === 0) await firstByte;
    samples.push(performance.now() - started);
    await client.call("disposeTerminal", { channel: uri });
  }
  report({
    benchmark: "spawn",
    description: `createTerminal until the first prompt byte reaches the WebSocket client (bash with shell integration, skeleton HOME), against node-pty spawning the same bash in the bench's process; ${RUNS} runs each, ms`,
    gateway: { p50: round(percentile(samples, 50)), p99: round(percentile(samples, 99)) },
    nodePtyDirect: { p50: round(percentile(baseline, 50)), p99: round(percentile(baseline, 99)) },
    ratios: { p50: ratioVerdict(percentile(samples, 50), percentile(baseline, 50), "<=", 1.5) },
  });
  client.close();
} finally {
  await system.stop();
}
