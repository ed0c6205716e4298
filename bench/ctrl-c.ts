import { BenchClient, percentile, report, round, sleep, startSystem } from "./support.js";

/** ^C during a `yes` flood: time from sending \x03 until the flood stops reaching the WebSocket client, and the bytes that still arrived. */
const RUNS = Number(process.env.BENCH_RUNS ?? 20);

const system = await startSystem();
try {
  const client = await BenchClient.open(system.gateway.address);
  const uri = "ahp-terminal:/flood";
  await client.openTerminal(uri);
  const stopTimes: number[] = [];
  const bytesAfter: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    let received = 0;
    let sentAt = 0;
    let afterCount = 0;
    let tail = "";
    let settled!: () => void;
    const promptBack = new Promise<void>((done) => (settled = done));
    client.onAction = (envelope) => {
      if (envelope.channel !== uri || envelope.action.type !== "terminal/data") return;
      const data: string = envelope.action.data;
      received += data.length;
      if (sentAt === 0) return;
      afterCount += data.length;
      tail = (tail + data).slice(-64);
      // The shell's prompt after "^C" means yes is gone and nothing more of the flood is coming.
      if (/\^C\r?\n?\$ $/.test(tail) || /\r\n\$ $/.test(tail)) settled();
    };
    client.input(uri, "yes\r");
    while (received < 4 * 1024 * 1024) await sleep(5);
    sentAt = performance.now();
    client.input(uri, "\u0003");
    await promptBack;
    stopTimes.push(performance.now() - sentAt);
    bytesAfter.push(afterCount);
    await sleep(50);
  }
  report({
    benchmark: "ctrl-c-under-flood",
    description: `yes in a shell through gateway and runner; ^C sent after 4 MiB arrived; ${RUNS} runs`,
    stopMs: { p50: round(percentile(stopTimes, 50)), p99: round(percentile(stopTimes, 99)) },
    bytesAfterCtrlC: { p50: percentile(bytesAfter, 50), max: Math.max(...bytesAfter) },
    baselines: { nodePtyRawP50Ms: 0.8, sshP50Ms: 2.9, wettyP50Ms: 4.1 },
    targets: { p50Ms: 5, p99Ms: 20, bytesAfterMax: 64 * 1024 },
  });
  client.close();
} finally {
  await system.stop();
}
