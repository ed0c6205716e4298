import { echoQuietAndBesideYes, WARMUP_KEYSTROKES } from "./measures/interactive.js";
import { echoStats } from "./probes.js";
import { report } from "./support.js";
import { nodePtyInProcess } from "./systems/node-pty.js";
import { product } from "./systems/product.js";
import { withSystem } from "./systems/terminal-system.js";
import { echoVerdicts } from "./targets.js";

/**
 * A keystroke until its echo arrives at an idle bash prompt, in a quiet terminal and beside a `yes`
 * flood in another: through gateway and runner over a WebSocket, and straight from node-pty in the
 * bench's own process running the same bash the same way (the baseline, measured in the same run
 * by the same probe).
 */
const KEYSTROKES = Number(process.env.BENCH_KEYSTROKES ?? 2000);

const untimed = (samples: () => Promise<number[]>) => samples();
const raw = await withSystem(nodePtyInProcess, (system) => echoQuietAndBesideYes(system, KEYSTROKES, untimed));
const gateway = await withSystem(() => product(), (system) => echoQuietAndBesideYes(system, KEYSTROKES, untimed));
report({
  benchmark: "echo-latency",
  description: `keystroke to echo at an idle bash prompt (a letter, then DEL), ${KEYSTROKES} keystrokes each after ${WARMUP_KEYSTROKES} unmeasured, ms: through gateway and runner, and node-pty in the bench's process (same run, same probe); quiet, and beside a yes flood in another terminal (neighbourFloodMBPerSecond: what that flood delivered meanwhile)`,
  nodePtyRaw: { quiet: echoStats(raw.quiet), busyNeighbour: echoStats(raw.busy) },
  gateway: { quiet: echoStats(gateway.quiet), busyNeighbour: echoStats(gateway.busy) },
  ratios: { quiet: echoVerdicts(gateway.quiet, raw.quiet), busyNeighbour: echoVerdicts(gateway.busy, raw.busy) },
  neighbourFloodMBPerSecond: { nodePtyRaw: raw.floodMBPerSecond, gateway: gateway.floodMBPerSecond },
});
