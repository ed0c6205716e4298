import { echoSamples, echoStats } from "./probes.js";
import { spawnRaw, type RawTerminal } from "./raw-pty.js";
import { BASH_INTEGRATION, BenchClient, report, shellEnv, sleep, startSystem } from "./support.js";
import { echoVerdicts } from "./targets.js";

/**
 * A keystroke until its echo arrives at an idle bash prompt, in a quiet terminal and beside a `yes`
 * flood in another: through gateway and runner over a WebSocket, and straight from node-pty in the
 * bench's own process running the same bash the same way (the baseline, measured in the same run
 * by the same probe).
 */
const KEYSTROKES = Number(process.env.BENCH_KEYSTROKES ?? 2000);
/** Time for bash to print its prompt (or for `yes` to take over its terminal) before keys are timed. */
const SETTLE_MS = 800;
const SHELL = "/bin/bash";
/** Unmeasured keystrokes first on each path: a service's first keystrokes pay for compiling its input and output paths. */
const WARMUP_KEYSTROKES = 200;

async function rawNodePty(): Promise<{ quiet: number[]; busy: number[] }> {
  const echo = spawnRaw(SHELL, ["--rcfile", BASH_INTEGRATION], shellEnv(SHELL));
  let listener: (text: string) => void = () => {};
  echo.onData((text) => listener(text));
  await sleep(SETTLE_MS);
  await echoSamples(WARMUP_KEYSTROKES, (key) => echo.write(key), (l) => (listener = l));
  const quiet = await echoSamples(KEYSTROKES, (key) => echo.write(key), (l) => (listener = l));
  // The flood's output is taken in the same process, as a terminal emulator showing both would.
  const flood: RawTerminal = spawnRaw("yes", [], shellEnv(SHELL));
  let flooded = 0;
  flood.onData((text) => (flooded += text.length));
  await sleep(SETTLE_MS);
  const busy = await echoSamples(KEYSTROKES, (key) => echo.write(key), (l) => (listener = l));
  flood.kill();
  echo.kill();
  if (flooded === 0) throw new Error("the node-pty flood produced nothing");
  return { quiet, busy };
}

async function throughGateway(): Promise<{ quiet: number[]; busy: number[] }> {
  const system = await startSystem({ shell: SHELL });
  try {
    const client = await BenchClient.connect(system.gateway.address);
    const uri = "ahp-terminal:/echo";
    await client.openTerminal(uri);
    let listener: (text: string) => void = () => {};
    client.onData(uri, (text) => listener(text));
    await sleep(SETTLE_MS);
    await echoSamples(WARMUP_KEYSTROKES, (key) => client.input(uri, key), (l) => (listener = l));
    const quiet = await echoSamples(KEYSTROKES, (key) => client.input(uri, key), (l) => (listener = l));
    const neighbour = await BenchClient.connect(system.gateway.address);
    const flood = "ahp-terminal:/neighbour";
    await neighbour.openTerminal(flood);
    let flooded = 0;
    neighbour.onData(flood, (text) => (flooded += text.length));
    neighbour.input(flood, "yes\r");
    await sleep(SETTLE_MS);
    const busy = await echoSamples(KEYSTROKES, (key) => client.input(uri, key), (l) => (listener = l));
    neighbour.input(flood, "\u0003");
    client.close();
    neighbour.close();
    if (flooded === 0) throw new Error("the gateway flood produced nothing");
    return { quiet, busy };
  } finally {
    await system.stop();
  }
}

const raw = await rawNodePty();
const gateway = await throughGateway();
report({
  benchmark: "echo-latency",
  description: `keystroke to echo at an idle bash prompt (a letter, then DEL), ${KEYSTROKES} keystrokes each after ${WARMUP_KEYSTROKES} unmeasured, ms: through gateway and runner, and node-pty in the bench's process (same run, same probe); quiet, and beside a yes flood in another terminal`,
  nodePtyRaw: { quiet: echoStats(raw.quiet), busyNeighbour: echoStats(raw.busy) },
  gateway: { quiet: echoStats(gateway.quiet), busyNeighbour: echoStats(gateway.busy) },
  ratios: { quiet: echoVerdicts(gateway.quiet, raw.quiet), busyNeighbour: echoVerdicts(gateway.busy, raw.busy) },
});
