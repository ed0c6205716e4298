import { join } from "node:path";
import WebSocket from "ws";
import { programPath } from "./floor/bare-wire.js";
import { createCtrlCProbe, ctrlCStats, echoSamples, echoStats, repeatCtrlC, type CtrlCResult, type OutputSource } from "./probes.js";
import { spawnRaw } from "./raw-pty.js";
import { BASH_INTEGRATION, BenchClient, ROOT, cpuDuring, report, round, shellEnv, sleep, startNode, startSystem } from "./support.js";
import { ctrlCStopVerdict, echoVerdicts } from "./targets.js";

/**
 * The architecture's floor for the interactive targets: the probes of echo-latency.ts and
 * ctrl-c.ts through the least each shape of the product can be, all in one run, so a target can
 * be told apart from what the shape itself costs:
 * - node-pty in the bench's own process (the baseline the targets are set against);
 * - one process holding a WebSocket server and node-pty, relaying unparsed (bench/floor/ws-pty.ts);
 * - two processes, a WebSocket relay and an h2c pty host, relaying unparsed over one HTTP/2
 *   stream (bench/floor/ws-relay.ts, bench/floor/pty-host.ts): the product's shape with nothing in it;
 * - the product: gateway and runner.
 * Echo: the same bash with the runner's integration script at an idle prompt, quiet and then beside
 * `yes` in another terminal of the same shape. ^C: `yes` in `/bin/sh`, as ctrl-c.ts runs it.
 * BENCH_ROUNDS rounds (2) run the shapes in turn, so a machine that drifts affects all of them.
 */
const KEYSTROKES = Number(process.env.BENCH_KEYSTROKES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** ^C runs per shape and round. */
const CTRL_C_RUNS = 10;
/** Unmeasured keystrokes first, and time for bash to print its prompt, as in echo-latency.ts. */
const WARMUP_KEYSTROKES = 200;
const SETTLE_MS = 800;
const BASH = "/bin/bash";
const BASH_ARGS = ["--rcfile", BASH_INTEGRATION];

/** A terminal opened through a shape: keys in, text out; `close` ends its process. */
interface Terminal {
  send(text: string): void;
  output: OutputSource;
  close(): Promise<void>;
}

/** One shape, started: terminals running a program (bash with integration, or `yes`/`/bin/sh` as named), and its processes. */
interface Shape {
  open(program: "bash" | "sh" | "yes"): Promise<Terminal>;
  pids: Record<string, number>;
  stop(): Promise<void>;
}

const PROGRAMS = { bash: [BASH, BASH_ARGS], sh: ["/bin/sh", []], yes: ["yes", []] } as const;

async function nodePtyInProcess(): Promise<Shape> {
  return {
    pids: {},
    open: async (program) => {
      const [file, args] = PROGRAMS[program];
      const terminal = spawnRaw(file, [...args], shellEnv(BASH));
      return { send: (text) => terminal.write(text), output: (listener) => terminal.onData(listener), close: async () => terminal.kill() };
    },
    stop: async () => {},
  };
}

/** Terminals of a bare shape: one WebSocket each, the program named in its path. */
function bareTerminals(url: string): Shape["open"] {
  return async (program) => {
    const [file, args] = PROGRAMS[program];
    const socket = new WebSocket(`${url}${programPath({ file, args: [...args] })}`, { perMessageDeflate: false });
    await new Promise((done, fail) => socket.once("open", done).once("error", fail));
    return {
      send: (text) => socket.send(text),
      output: (listener) => socket.on("message", (data: Buffer) => listener(data.toString("utf8"))),
      // The shape kills the connection's pty when the socket closes.
      close: async () => socket.close(),
    };
  };
}

const script = (name: string) => [...process.execArgv, join(ROOT, "bench", "floor", name)];

async function oneProcessFloor(): Promise<Shape> {
  const server = await startNode(script("ws-pty.ts"), shellEnv(BASH));
  return { open: bareTerminals(server.address), pids: { server: server.child.pid! }, stop: () => server.stop() };
}

async function twoProcessFloor(): Promise<Shape> {
  const host = await startNode(script("pty-host.ts"), shellEnv(BASH));
  const relay = await startNode([...script("ws-relay.ts"), host.address]);
  return { open: bareTerminals(relay.address), pids: { relay: relay.child.pid!, ptyHost: host.child.pid! }, stop: async () => (await relay.stop(), await host.stop()) };
}

async function product(): Promise<Shape> {
  const system = await startSystem({ shell: BASH });
  let opened = 0;
  return {
    pids: { gateway: system.gateway.child.pid!, runner: system.runner.child.pid! },
    open: async (program) => {
      const client = await BenchClient.connect(system.gateway.address);
      const channel = `ahp-terminal:/floor-${opened++}`;
      await client.openTerminal(channel);
      // The runner's terminals run bash here; the other programs replace it.
      if (program !== "bash") client.input(channel, program === "yes" ? "exec yes\r" : "exec env PS1='$ ' /bin/sh\r");
      // Disposed, not only left: the gateway keeps following a terminal nobody watches, and a `yes` left running would flood the next phase.
      const close = async () => (await client.call("disposeTerminal", { channel }), client.close());
      return { send: (text) => client.input(channel, text), output: (listener) => client.onData(channel, listener), close };
    },
    stop: () => system.stop(),
  };
}

interface Samples {
  samples: number[];
  /** CPU µs per keystroke of each process on the path (the bench's own process is "client"), a neighbour's flood included. */
  cpuUsPerKey: Record<string, number>;
}

interface Round {
  quiet: Samples;
  busy: Samples;
  ctrlC: CtrlCResult[];
}

/** Echo quiet and beside a flood, then ^C under a flood, through one shape. */
async function measure(shape: Shape): Promise<Round> {
  const echo = await shape.open("bash");
  let listener: (text: string) => void = () => {};
  echo.output((text) => listener(text));
  const timed = async (): Promise<Samples> => {
    const { result, cpuMs } = await cpuDuring({ client: process.pid, ...shape.pids }, () => echoSamples(KEYSTROKES, echo.send, (l) => (listener = l)));
    return { samples: result, cpuUsPerKey: Object.fromEntries(Object.entries(cpuMs).map(([name, ms]) => [name, round((ms * 1000) / KEYSTROKES, 1)])) };
  };
  await sleep(SETTLE_MS);
  await echoSamples(WARMUP_KEYSTROKES, echo.send, (l) => (listener = l));
  const quiet = await timed();
  const flood = await shape.open("yes");
  let flooded = 0;
  flood.output((text) => (flooded += text.length));
  await sleep(SETTLE_MS);
  const busy = await timed();
  await flood.close();
  await echo.close();
  if (flooded === 0) throw new Error("the flood delivered nothing");
  const shell = await shape.open("sh");
  await sleep(SETTLE_MS);
  const ctrlC = await repeatCtrlC(createCtrlCProbe(shell.send, shell.output), CTRL_C_RUNS);
  await shell.close();
  return { quiet, busy, ctrlC };
}

const SHAPES = { nodePty: nodePtyInProcess, oneProcessFloor, twoProcessFloor, product } as const;
type ShapeName = keyof typeof SHAPES;
const rounds: Record<ShapeName, Round[]> = { nodePty: [], oneProcessFloor: [], twoProcessFloor: [], product: [] };
for (let i = 0; i < ROUNDS; i++) {
  for (const name of Object.keys(SHAPES) as ShapeName[]) {
    const shape = await SHAPES[name]();
    try {
      rounds[name].push(await measure(shape));
    } finally {
      await shape.stop();
    }
  }
}

const echoSummary = (name: ShapeName, phase: "quiet" | "busy") => {
  const samples = rounds[name].flatMap((run) => run[phase].samples);
  const baseline = rounds.nodePty.flatMap((run) => run[phase].samples);
  return {
    ...echoStats(samples),
    perRound: rounds[name].map(({ [phase]: run }) => ({ ...echoStats(run.samples), cpuUsPerKey: run.cpuUsPerKey })),
    ...(name === "nodePty" ? {} : { ratios: echoVerdicts(samples, baseline) }),
  };
};
const ctrlCSummary = (name: ShapeName) => {
  const results = rounds[name].flatMap((run) => run.ctrlC);
  const stops = (of: CtrlCResult[]) => of.map((r) => r.stopMs);
  return {
    ...ctrlCStats(results),
    ...(name === "nodePty" ? {} : { ratios: { stopP50: ctrlCStopVerdict(stops(results), stops(rounds.nodePty.flatMap((run) => run.ctrlC))) } }),
  };
};
report({
  benchmark: "floor",
  description: `the interactive probes through each shape, ${ROUNDS} rounds, shapes in turn: node-pty in the bench's process; a bare one-process WebSocket pty server; the product's two-process shape with nothing in it (WebSocket relay + h2c pty host, unparsed); the product. Echo at an idle bash prompt, ${KEYSTROKES} keys per round after ${WARMUP_KEYSTROKES} unmeasured, quiet and beside yes in another terminal of the shape, ms; ^C under yes in /bin/sh, ${CTRL_C_RUNS} runs per round. Ratios against node-pty beside echo-latency's and ctrl-c's targets`,
  ...Object.fromEntries(
    (Object.keys(SHAPES) as ShapeName[]).map((name) => [name, { echoQuiet: echoSummary(name, "quiet"), echoBesideYes: echoSummary(name, "busy"), ctrlC: ctrlCSummary(name) }]),
  ),
});
