import { spawnToFirstByte } from "./measures/interactive.js";
import { percentile, report, round } from "./support.js";
import { nodePtyInProcess } from "./systems/node-pty.js";
import { product } from "./systems/product.js";
import { withSystem, type TerminalSystem } from "./systems/terminal-system.js";
import { ratioVerdict } from "./targets.js";

/**
 * createTerminal until the first prompt byte reaches the WebSocket client, against node-pty in the
 * bench's own process spawning the same bash the same way (the runner's integration script as its
 * rcfile, the same scratch HOME), measured in the same run.
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 50);

async function spawns(system: TerminalSystem): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(await spawnToFirstByte(system));
  return samples;
}

const baseline = await withSystem(nodePtyInProcess, spawns);
const samples = await withSystem(() => product(), spawns);
report({
  benchmark: "spawn",
  description: `createTerminal until the first prompt byte reaches the WebSocket client (bash with shell integration, skeleton HOME), against node-pty spawning the same bash in the bench's process; ${RUNS} runs each, ms`,
  gateway: { p50: round(percentile(samples, 50)), p99: round(percentile(samples, 99)) },
  nodePtyDirect: { p50: round(percentile(baseline, 50)), p99: round(percentile(baseline, 99)) },
  ratios: { p50: ratioVerdict(percentile(samples, 50), percentile(baseline, 50), "<=", 1.5) },
});
