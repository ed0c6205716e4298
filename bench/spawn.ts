import { createRequire } from "node:module";
import { BenchClient, percentile, report, round, startSystem } from "./support.js";

/** createTerminal until the first prompt byte reaches the client, against node-pty spawning the same shell in-process. */
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const SHELL = "/bin/bash";

async function direct(): Promise<number> {
  const pty = createRequire(import.meta.url)("node-pty") as typeof import("node-pty");
  const started = performance.now();
  return new Promise((done) => {
    const term = pty.spawn(SHELL, ["--noprofile", "--norc"], { cols: 80, rows: 24, env: { ...process.env, HOME: "/tmp", PS1: "$ " } });
    const once = term.onData(() => {
      once.dispose();
      done(performance.now() - started);
      term.kill("SIGKILL");
    });
  });
}

const baseline: number[] = [];
for (let i = 0; i < RUNS; i++) baseline.push(await direct());
const system = await startSystem({ shell: SHELL });
try {
  const client = await BenchClient.open(system.gateway.address);
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const uri = `ahp-terminal:/spawn-${i}`;
    let first!: () => void;
    const firstByte = new Promise<void>((done) => (first = done));
    client.onAction = (envelope) => {
      if (envelope.channel === uri && envelope.action.type === "terminal/data") first();
    };
    const started = performance.now();
    // Subscribing in the same breath as creating: the first byte arrives live, not in the snapshot.
    const created = client.call("createTerminal", { channel: uri });
    await created;
    const { snapshot } = await client.call("subscribe", { channel: uri });
    if (snapshot.state.content.length === 0) await firstByte;
    samples.push(performance.now() - started);
    await client.call("disposeTerminal", { channel: uri });
  }
  report({
    benchmark: "spawn",
    description: `createTerminal until the first prompt byte reaches the WebSocket client (bash with shell integration), ${RUNS} runs, ms`,
    gateway: { p50: round(percentile(samples, 50)), p99: round(percentile(samples, 99)) },
    nodePtyDirect: { p50: round(percentile(baseline, 50)), p99: round(percentile(baseline, 99)) },
    baselines: { nodePtyP50: 5.5, sshMultiplexedP50: 12.5, wettyP50: 17 },
    targets: { p50: 15 },
  });
  client.close();
} finally {
  await system.stop();
}
