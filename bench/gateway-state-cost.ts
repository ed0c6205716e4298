import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { nodeOptionsFor } from "../lib/service-node-options.js";
import { machine, report, ROOT, round } from "./support.js";

/**
 * What the gateway's state store spends per MB of terminal output, apart from everything around it
 * (no runner, no sockets): each terminal's output is applied to its state, its scrollback kept, the
 * action stamped, kept for reconnect and framed once for a subscriber. The same load runs with the
 * default scrollback (200,000 characters per terminal) and with none, in processes of their own with
 * the gateway's node options, rounds alternating: the difference is what keeping scrollback costs.
 * The build is BENCH_DIST's, or dist/app.
 */
const TERMINALS = Number(process.env.BENCH_TERMINALS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MEGABYTES = Number(process.env.BENCH_STATE_MB ?? 400);
/** The gateway's default `--scrollback-chars`. */
const DEFAULT_SCROLLBACK_CHARS = 200_000;
const DIST = process.env.BENCH_DIST ?? join(ROOT, "dist", "app");

interface Run {
  cpuMsPerMB: number;
  collectorMsPerMB: number;
  peakRssMiB: number;
}

function run(scrollbackChars: number): Run {
  const args = [...nodeOptionsFor("gateway/main"), "--import", "tsx", "bench/gateway-state-process.ts", DIST, String(TERMINALS), String(scrollbackChars), String(MEGABYTES)];
  return JSON.parse(execFileSync(process.execPath, args, { cwd: ROOT, encoding: "utf8" })) as Run;
}

const runs: Record<"scrollback" | "none", Run[]> = { scrollback: [], none: [] };
for (let i = 0; i < ROUNDS; i++) {
  for (const kind of i % 2 === 0 ? (["scrollback", "none"] as const) : (["none", "scrollback"] as const)) runs[kind].push(run(kind === "scrollback" ? DEFAULT_SCROLLBACK_CHARS : 0));
}
const mean = (list: Run[], key: keyof Run) => round(list.reduce((sum, one) => sum + one[key], 0) / list.length);
const figures = (list: Run[]) => ({ cpuMsPerMB: mean(list, "cpuMsPerMB"), collectorMsPerMB: mean(list, "collectorMsPerMB"), peakRssMiB: mean(list, "peakRssMiB") });
const withScrollback = figures(runs.scrollback);
const without = figures(runs.none);
report({
  benchmark: "gateway-state-cost",
  description: `the gateway's state store alone: ${MEGABYTES} MB of output over ${TERMINALS} terminals in 4,002-character chunks, each terminal with one subscriber, with ${DEFAULT_SCROLLBACK_CHARS} characters of scrollback and with none, ${ROUNDS} rounds alternating`,
  scrollback: withScrollback,
  noScrollback: without,
  scrollbackCostMsPerMB: round(withScrollback.cpuMsPerMB - without.cpuMsPerMB),
  rounds: runs,
  machine: machine(),
});
