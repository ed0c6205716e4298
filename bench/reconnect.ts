import { BenchClient, percentile, report, round, runnerClient, sleep, startSystem } from "./support.js";
import { valueVerdict } from "./targets.js";

/** Replaying a 4 MiB backlog through the runner's Attach, and the snapshot of a full 200,000-character scrollback to a reconnecting WebSocket client. */
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const BACKLOG = 4 * 1024 * 1024;
/** A reconnecting viewer should have its screen back within a frame or two of a person's attention. */
const TARGET_P50_MS = 100;

const system = await startSystem({ runnerArgs: ["--retain-bytes", String(8 * 1024 * 1024)] });
try {
  const runner = runnerClient(system.runner.address);
  const { terminal } = await runner.spawn({ command: `head -c ${BACKLOG} /dev/zero | tr '\\0' x; sleep 1000` });
  while (Number((await runner.get({ id: terminal!.id })).terminal!.endOffset) < BACKLOG) await sleep(20);
  const replays: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    let bytes = 0;
    for await (const event of runner.attach({ id: terminal!.id, follow: false })) if (event.event.case === "output") bytes += event.event.value.data.length;
    replays.push(performance.now() - started);
    if (bytes < BACKLOG) throw new Error(`replayed ${bytes} bytes`);
  }

  const client = await BenchClient.connect(system.gateway.address);
  const uri = "ahp-terminal:/scrollback";
  await client.call("createTerminal", { channel: uri });
  client.input(uri, "head -c 400000 /dev/zero | tr '\\0' y\r");
  for (;;) {
    const { snapshot } = await client.call("subscribe", { channel: uri });
    const chars = snapshot.state.content.reduce((sum: number, part: { value?: string; output?: string }) => sum + (part.value ?? part.output ?? "").length, 0);
    if (chars >= 180_000) break;
    await sleep(50);
  }
  client.close();
  const snapshots: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const again = await BenchClient.connect(system.gateway.address);
    await again.call("subscribe", { channel: uri });
    snapshots.push(performance.now() - started);
    again.close();
  }
  report({
    benchmark: "reconnect",
    description: `runner Attach replay of a 4 MiB backlog; a new WebSocket connection's initialize + subscribe to a terminal with a full scrollback; ${RUNS} runs, ms`,
    runnerReplay4MiB: { p50: round(percentile(replays, 50)), p99: round(percentile(replays, 99)), p50Target: valueVerdict(percentile(replays, 50), "<=", TARGET_P50_MS) },
    websocketSnapshot: { p50: round(percentile(snapshots, 50)), p99: round(percentile(snapshots, 99)), p50Target: valueVerdict(percentile(snapshots, 50), "<=", TARGET_P50_MS) },
  });
} finally {
  await system.stop();
}
