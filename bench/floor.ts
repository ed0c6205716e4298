import { join } from "node:path";
import WebSocket from "ws";
import { echoSamples } from "./probes.js";
import { spawnRaw } from "./raw-pty.js";
import { BASH_INTEGRATION, BenchClient, ROOT, cpuDuring, descendantsOf, percentile, report, round, shellEnv, sleep, startNode, startSystem, type Service } from "./support.js";
import { ratioVerdict } from "./targets.js";

/**
 * The architecture's floor for keystroke echo: the same probe as echo-latency.ts through the least
 * each shape of the product can be, all in one run, so the echo targets can be told apart from
 * what the shape itself costs:
 * - node-pty in the bench's own process (the baseline the targets are set against);
 * - one process holding a WebSocket server and node-pty, relaying unparsed (bench/floor/ws-pty.ts);
 * - two processes, a WebSocket relay and an h2c pty host, relaying unparsed over one HTTP/2
 *   stream (bench/floor/ws-relay.ts, bench/floor/pty-host.ts): the product's shape with nothing in it;
 * - the product: gateway and runner.
 * Every path runs the same bash with the runner's integration script at an idle prompt.
 * BENCH_ROUNDS rounds (2) run the paths in turn, so a machine that drifts affects all of them.
 */
const KEYSTROKES = Number(process.env.BENCH_KEYSTROKES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** Unmeasured keystrokes first, and time for bash to print its prompt, as in echo-latency.ts. */
const WARMUP_KEYSTROKES = 200;
const SETTLE_MS = 800;
const SHELL = "/bin/bash";
const SHELL_ARGS = ["--rcfile", BASH_INTEGRATION];

interface Measured {
  samples: number[];
  /** CPU µs per keystroke of each process on the path (the bench's own process is "client"). */
  cpuUsPerKey: Record<string, number>;
}

/** Times KEYSTROKES echoes after the warm-up, with the CPU each process spent on them. */
async function measure(pids: Record<string, number>, send: (key: string) => void, output: (listener: (text: string) => void) => void): Promise<Measured> {
  let listener: (text: string) => void = () => {};
  output((text) => listener(text));
  await sleep(SETTLE_MS);
  await echoSamples(WARMUP_KEYSTROKES, send, (l) => (listener = l));
  const { result, cpuMs } = await cpuDuring({ client: process.pid, ...pids }, () => echoSamples(KEYSTROKES, send, (l) => (listener = l)));
  return { samples: result, cpuUsPerKey: Object.fromEntries(Object.entries(cpuMs).map(([name, ms]) => [name, round((ms * 1000) / KEYSTROKES, 1)])) };
}

async function nodePtyInProcess(): Promise<Measured> {
  const terminal = spawnRaw(SHELL, SHELL_ARGS, shellEnv(SHELL));
  try {
    return await measure({}, (key) => terminal.write(key), (listener) => terminal.onData(listener));
  } finally {
    terminal.kill();
  }
}

/** A bare WebSocket to `url` naming the bench's bash, its messages handed on as text. */
async function bareSocket(url: string): Promise<WebSocket> {
  const socket = new WebSocket(`${url}/?file=${encodeURIComponent(SHELL)}&args=${encodeURIComponent(JSON.stringify(SHELL_ARGS))}`, { perMessageDeflate: false });
  await new Promise((done, fail) => socket.once("open", done).once("error", fail));
  return socket;
}

async function throughBare(services: Service[], url: string, names: string[]): Promise<Measured> {
  const socket = await bareSocket(url);
  try {
    const pids = Object.fromEntries(services.map((service, i) => [names[i]!, service.child.pid!]));
    return await measure(pids, (key) => socket.send(key), (listener) => socket.on("message", (data: Buffer) => listener(data.toString("utf8"))));
  } finally {
    socket.close();
  }
}

const script = (name: string) => [...process.execArgv, join(ROOT, "bench", "floor", name)];

async function oneProcessFloor(): Promise<Measured> {
  const server = await startNode(script("ws-pty.ts"), shellEnv(SHELL));
  try {
    return await throughBare([server], server.address, ["server"]);
  } finally {
    await server.stop();
  }
}

async function twoProcessFloor(): Promise<Measured> {
  const host = await startNode(script("pty-host.ts"), shellEnv(SHELL));
  const relay = await startNode([...script("ws-relay.ts"), host.address]);
  try {
    return await throughBare([relay, host], relay.address, ["relay", "ptyHost"]);
  } finally {
    await relay.stop();
    await host.stop();
  }
}

async function product(): Promise<Measured> {
  const system = await startSystem({ shell: SHELL });
  try {
    const client = await BenchClient.open(system.gateway.address);
    const uri = "ahp-terminal:/floor";
    await client.openTerminal(uri);
    const result = await measure({ gateway: system.gateway.child.pid!, runner: system.runner.child.pid! }, (key) => client.input(uri, key), (listener) => client.onData(uri, listener));
    client.close();
    return result;
  } finally {
    await system.stop();
  }
}

const PATHS = { nodePty: nodePtyInProcess, oneProcessFloor, twoProcessFloor, product } as const;
type PathName = keyof typeof PATHS;
const runs: Record<PathName, Measured[]> = { nodePty: [], oneProcessFloor: [], twoProcessFloor: [], product: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const name of Object.keys(PATHS) as PathName[]) runs[name].push(await PATHS[name]());
}
// Shells the paths started must be gone before the figures are trusted to be from a quiet machine.
if (descendantsOf(process.pid).length > 0) await sleep(200);

const summary = (name: PathName) => {
  const samples = runs[name].flatMap((run) => run.samples);
  const baseline = runs.nodePty.flatMap((run) => run.samples);
  return {
    p50: round(percentile(samples, 50), 3),
    p99: round(percentile(samples, 99), 3),
    perRound: runs[name].map((run) => ({ p50: round(percentile(run.samples, 50), 3), p99: round(percentile(run.samples, 99), 3), cpuUsPerKey: run.cpuUsPerKey })),
    ...(name === "nodePty"
      ? {}
      : { ratios: { p50: ratioVerdict(percentile(samples, 50), percentile(baseline, 50), "<=", 2.5), p99: ratioVerdict(percentile(samples, 99), percentile(baseline, 99), "<=", 2) } }),
  };
};
report({
  benchmark: "floor",
  description: `keystroke to echo at an idle bash prompt, ${KEYSTROKES} keystrokes per round after ${WARMUP_KEYSTROKES} unmeasured, ${ROUNDS} rounds, ms: node-pty in the bench's process; a bare one-process WebSocket pty server; the product's two-process shape with nothing in it (WebSocket relay + h2c pty host, unparsed); the product. Ratios against node-pty beside echo-latency's targets`,
  ...Object.fromEntries((Object.keys(PATHS) as PathName[]).map((name) => [name, summary(name)])),
});
