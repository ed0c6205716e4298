import { ctrlCUnderYes, echoQuietAndBesideYes, WARMUP_KEYSTROKES } from "./measures/interactive.js";
import { ctrlCStats, echoStats, type CtrlCResult } from "./probes.js";
import { report, round } from "./support.js";
import { connectFloor, oneProcessFloor, twoProcessFloor } from "./systems/floor-shapes.js";
import { nodePtyInProcess } from "./systems/node-pty.js";
import { product } from "./systems/product.js";
import { cpuOfRolesDuring } from "./systems/role-cpu.js";
import { withSystem, type TerminalSystem } from "./systems/terminal-system.js";
import { ctrlCStopVerdict, echoVerdicts } from "./targets.js";

/**
 * The architecture's floor for the interactive targets: the probes of echo-latency.ts and
 * ctrl-c.ts through the least each shape of the product can be, all in one run, so a target can
 * be told apart from what the shape itself costs:
 * - node-pty in the bench's own process (the baseline the targets are set against);
 * - one process holding a WebSocket server and node-pty, relaying unparsed (bench/floor/ws-pty.ts);
 * - two processes, a WebSocket relay and an h2c pty host, relaying unparsed over one HTTP/2
 *   stream (bench/floor/ws-relay.ts, bench/floor/pty-host.ts): the product's shape with nothing in it;
 * - the same two processes with connect between them and nothing else: the relay calls the pty host
 *   through the client generated from proto/terminal/v1 (Spawn, Attach, WriteStream), and the host
 *   answers with connect's handler (bench/floor/connect-relay.ts, bench/floor/connect-pty-host.ts):
 *   what the RPC layer alone adds;
 * - the product: gateway and runner.
 * Echo: the same bash with the runner's integration script at an idle prompt, quiet and then beside
 * `yes` in another terminal of the same shape. ^C: `yes` in `/bin/sh`, as ctrl-c.ts runs it.
 * BENCH_ROUNDS rounds (2) run the shapes in turn, so a machine that drifts affects all of them.
 */
const KEYSTROKES = Number(process.env.BENCH_KEYSTROKES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** ^C runs per shape and round. */
const CTRL_C_RUNS = 10;

interface Samples {
  samples: number[];
  /** CPU µs per keystroke of each process on the path (the bench's own is "benchProcess"), a neighbour's flood included. */
  cpuUsPerKey: Record<string, number>;
}

interface Round {
  quiet: Samples;
  busy: Samples;
  ctrlC: CtrlCResult[];
}

/** Echo quiet and beside a flood, then ^C under a flood, through one shape. */
async function measure(shape: TerminalSystem): Promise<Round> {
  const timed = async (samples: () => Promise<number[]>): Promise<Samples> => {
    const { result, cpu } = await cpuOfRolesDuring(shape, samples);
    const cpuMs = { ...cpu.server, ...cpu.clients };
    return { samples: result, cpuUsPerKey: Object.fromEntries(Object.entries(cpuMs).map(([name, ms]) => [name, round((ms * 1000) / KEYSTROKES, 1)])) };
  };
  const { quiet, busy } = await echoQuietAndBesideYes(shape, KEYSTROKES, timed);
  return { quiet, busy, ctrlC: await ctrlCUnderYes(shape, CTRL_C_RUNS) };
}

const SHAPES = { nodePty: nodePtyInProcess, oneProcessFloor, twoProcessFloor, connectFloor, product: () => product() } as const;
type ShapeName = keyof typeof SHAPES;
const rounds: Record<ShapeName, Round[]> = { nodePty: [], oneProcessFloor: [], twoProcessFloor: [], connectFloor: [], product: [] };
for (let i = 0; i < ROUNDS; i++) {
  for (const name of Object.keys(SHAPES) as ShapeName[]) rounds[name].push(await withSystem(SHAPES[name], measure));
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
  description: `the interactive probes through each shape, ${ROUNDS} rounds, shapes in turn: node-pty in the bench's process; a bare one-process WebSocket pty server; the product's two-process shape with nothing in it (WebSocket relay + h2c pty host, unparsed); the same with connect between them and nothing else (Spawn, Attach, WriteStream); the product. Echo at an idle bash prompt, ${KEYSTROKES} keys per round after ${WARMUP_KEYSTROKES} unmeasured, quiet and beside yes in another terminal of the shape, ms; ^C under yes in /bin/sh, ${CTRL_C_RUNS} runs per round. Ratios against node-pty beside echo-latency's and ctrl-c's targets`,
  ...Object.fromEntries(
    (Object.keys(SHAPES) as ShapeName[]).map((name) => [name, { echoQuiet: echoSummary(name, "quiet"), echoBesideYes: echoSummary(name, "busy"), ctrlC: ctrlCSummary(name) }]),
  ),
});
