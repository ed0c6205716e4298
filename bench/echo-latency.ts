import { BenchClient, percentile, report, round, sleep, startSystem } from "./support.js";

/** A keystroke via the gateway until its echo arrives: a quiet terminal, and one whose neighbour runs `yes`. */
const KEYSTROKES = Number(process.env.BENCH_KEYSTROKES ?? 2000);

async function measure(client: BenchClient, uri: string): Promise<number[]> {
  const samples: number[] = [];
  let waiting: ((text: string) => void) | undefined;
  client.onAction = (envelope) => {
    if (envelope.channel === uri && envelope.action.type === "terminal/data") waiting?.(envelope.action.data);
  };
  for (let i = 0; i < KEYSTROKES; i++) {
    // Printable keys in cat's canonical line: the line discipline echoes each at once; a newline now and then keeps the line short.
    const key = i % 64 === 63 ? "\r" : "a";
    const echoed = new Promise<void>((done) => (waiting = () => done()));
    const started = performance.now();
    client.input(uri, key);
    await echoed;
    samples.push(performance.now() - started);
  }
  return samples;
}

const system = await startSystem();
try {
  const client = await BenchClient.open(system.gateway.address);
  const uri = "ahp-terminal:/echo";
  await client.openTerminal(uri);
  client.input(uri, "exec cat\r");
  await sleep(500);
  const quiet = await measure(client, uri);

  const neighbour = await BenchClient.open(system.gateway.address);
  const flood = "ahp-terminal:/neighbour";
  await neighbour.openTerminal(flood);
  neighbour.input(flood, "yes\r");
  await sleep(500);
  const busy = await measure(client, uri);
  neighbour.input(flood, "\u0003");
  report({
    benchmark: "echo-latency",
    description: `keystroke to echo through gateway and runner, ${KEYSTROKES} keystrokes each, ms`,
    quiet: { p50: round(percentile(quiet, 50), 3), p99: round(percentile(quiet, 99), 3) },
    busyNeighbour: { p50: round(percentile(busy, 50), 3), p99: round(percentile(busy, 99), 3) },
    baselines: { nodePtyRaw: { p50: 0.26, p99: 1.36 }, ssh: { p50: 0.41, p99: 1.51 }, wetty: { p50: 2.94, p99: 4.93 } },
    targets: { quietP50: 1, quietP99: 3, busyNeighbourP99: 8 },
  });
  client.close();
  neighbour.close();
} finally {
  await system.stop();
}
