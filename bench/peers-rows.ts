import type { BusyRun } from "./measures/busy-terminals.js";
import type { FloodRun } from "./measures/cat-flood.js";
import { TYPING_GAP_MS } from "./measures/interactive.js";
import type { CtrlCResult } from "./probes.js";
import type { RoleCpu } from "./systems/role-cpu.js";
import { percentile, round } from "./support.js";
import { ratioVerdict, type Verdict } from "./targets.js";

/**
 * The peers bench's table: one row per figure, every system's value side by side, this project's
 * ratio to each of the others, and the row's target against the peer it names.
 */

/** What the peers bench measured, by measurement and system name. */
export interface Measured {
  flood: Record<string, FloodRun[]>;
  busy: Record<number, Record<string, BusyRun[]>>;
  echo: Record<string, number[]>;
  /** Echo times of keys sent at a typing pace (measures/interactive.ts). */
  echoPaced: Record<string, number[]>;
  /** Each round's CPU by role over its echo keystrokes. */
  echoCpu: Record<string, Array<{ keystrokes: number; cpu: RoleCpu }>>;
  ctrlC: Record<string, CtrlCResult[]>;
  spawn: Record<string, number[]>;
}

/** The system whose figures are set against the others'. */
const PRODUCT = "product";
/**
 * The lower bounds among the systems: the same work with nothing of the product in it (node-pty in
 * the bench's process, the floor shapes of bench/floor/). A target is also read against what they
 * reach: one the bare two-process shape itself misses leaves the product's work no room at all.
 */
const LOWER_BOUNDS = ["nodePty", "oneProcessFloor", "twoProcessFloor"];

/** A target of a row: this project's figure over `vs`'s, against a bound. */
interface Target {
  vs: string;
  bound: "<=" | ">=";
  limit: number;
}

interface Row {
  unit: string;
  bySystem: Record<string, number>;
  /** This project's figure over each other system's. */
  productTo: Record<string, number>;
  target?: (Verdict & { vs: string; lowerBounds?: Record<string, Verdict> }) | { vs: string; target: string; met: null; reason: string };
  detail?: Record<string, unknown>;
}

function row(unit: string, bySystem: Record<string, number>, target?: Target, detail?: Record<string, unknown>): Row {
  const ours = bySystem[PRODUCT];
  const productTo: Record<string, number> = {};
  for (const [name, value] of Object.entries(bySystem)) if (ours !== undefined && name !== PRODUCT && value > 0) productTo[name] = round(ours / value);
  const result: Row = { unit, bySystem, productTo, ...(detail ? { detail } : {}) };
  if (!target) return result;
  const theirs = bySystem[target.vs];
  result.target =
    ours === undefined || theirs === undefined
      ? { vs: target.vs, target: `${target.bound} ${target.limit}`, met: null, reason: `not measured: ${[ours === undefined ? PRODUCT : [], theirs === undefined ? target.vs : []].flat().join(", ")}` }
      : { vs: target.vs, ...ratioVerdict(ours, theirs, target.bound, target.limit), ...lowerBoundVerdicts(bySystem, theirs, target) };
  return result;
}

/** Each lower bound measured, its figure over the target peer's against the same bound: `{}` when none was. */
function lowerBoundVerdicts(bySystem: Record<string, number>, theirs: number, target: Target): { lowerBounds?: Record<string, Verdict> } {
  const measured = LOWER_BOUNDS.filter((name) => bySystem[name] !== undefined);
  if (measured.length === 0) return {};
  return { lowerBounds: Object.fromEntries(measured.map((name) => [name, ratioVerdict(bySystem[name]!, theirs, target.bound, target.limit)])) };
}

const mapValues = <T, U>(record: Record<string, T>, fn: (value: T, key: string) => U): Record<string, U> => Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value, key)]));
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const serverMs = (cpu: { server: Record<string, number> }) => sum(Object.values(cpu.server));
const median = (values: number[]) => round(percentile(values, 50));
/** Each role's CPU ms summed over `runs` (the roles of the first run). */
const msByRole = <R>(runs: R[], pick: (run: R) => Record<string, number>): Record<string, number> => mapValues(pick(runs[0]!), (_, role) => sum(runs.map((run) => pick(run)[role] ?? 0)));

function floodRows(flood: Measured["flood"], expectedBytes: number): Record<string, Row> {
  const mb = expectedBytes / 1e6;
  // Roles are those of the run whose serving CPU is the median, so they add up to the figure beside them
  // (each role's own median could come from a different run).
  const medianRun = (runs: FloodRun[]): FloodRun => {
    const totals = runs.map((run) => serverMs(run.cpu));
    return runs[totals.indexOf(percentile(totals, 50))]!;
  };
  const perMB = (runs: FloodRun[], pick: (run: FloodRun) => Record<string, number>) => mapValues(pick(medianRun(runs)), (ms) => round(ms / mb));
  return {
    catFloodMBPerSecond: row("MB/s, median of runs", mapValues(flood, (runs) => median(runs.map((run) => mb / run.seconds))), { vs: "wetty", bound: ">=", limit: 1 }, {
      // Every run in the order it was made, so a median can be read beside its spread (and a slow first round seen).
      byRun: mapValues(flood, (runs) => runs.map((run) => round(mb / run.seconds))),
      bytesLost: mapValues(flood, (runs) => runs.map((run) => expectedBytes - run.bytes)),
    }),
    catFloodCpuMsPerMB: row("CPU ms per MB of the serving processes, median of runs", mapValues(flood, (runs) => median(runs.map((run) => serverMs(run.cpu) / mb))), { vs: "wetty", bound: "<=", limit: 2 }, {
      byRole: mapValues(flood, (runs) => perMB(runs, (run) => run.cpu.server)),
      byRun: mapValues(flood, (runs) => runs.map((run) => mapValues(run.cpu.server, (ms) => round(ms / mb)))),
      clientsApart: mapValues(flood, (runs) => perMB(runs, (run) => run.cpu.clients)),
    }),
  };
}

/** The many-terminals load the target is set for: 100 terminals; other counts are reported beside it, with no target. */
const BUSY_TARGET_TERMINALS = 100;

function busyRow(runsBySystem: Record<string, BusyRun[]>, terminals: number): Row {
  const deliveredMB = (runs: BusyRun[]) => sum(runs.map((run) => run.deliveredBytes)) / 1e6;
  const perMB = (runs: BusyRun[], pick: (run: BusyRun) => Record<string, number>) => mapValues(msByRole(runs, pick), (ms) => round(ms / deliveredMB(runs)));
  return row("CPU ms of the serving processes per MB delivered to the clients, over all rounds' windows", mapValues(runsBySystem, (runs) => round(sum(runs.map((run) => serverMs(run.cpu))) / deliveredMB(runs))), terminals === BUSY_TARGET_TERMINALS ? { vs: "wetty", bound: "<=", limit: 2 } : undefined, {
    byRole: mapValues(runsBySystem, (runs) => perMB(runs, (run) => run.cpu.server)),
    clientsApart: mapValues(runsBySystem, (runs) => perMB(runs, (run) => run.cpu.clients)),
    deliveredMBPerSecond: mapValues(runsBySystem, (runs) => round(deliveredMB(runs) / sum(runs.map((run) => run.windowSeconds)))),
    everyByteDelivered: mapValues(runsBySystem, (runs) => {
      const missingChars = sum(runs.map((run) => run.missingChars));
      const unreported = sum(runs.map((run) => run.unreported));
      return { producedLines: sum(runs.map((run) => run.producedLines)), missingChars, unreportedTerminals: unreported, target: "== 0", met: missingChars === 0 && unreported === 0 };
    }),
  });
}

/**
 * CPU per keystroke and its echo, over every round: no target, but it says where an echo's time can
 * go (a system that spends more per keystroke leaves its tail to whatever else wants the cores).
 */
function echoCpuRow(runsBySystem: Measured["echoCpu"]): Row {
  const keystrokes = (runs: Measured["echoCpu"][string]) => sum(runs.map((run) => run.keystrokes));
  const perKey = (runs: Measured["echoCpu"][string], pick: (cpu: RoleCpu) => Record<string, number>) => mapValues(msByRole(runs, (run) => pick(run.cpu)), (ms) => round((ms * 1000) / keystrokes(runs), 0));
  return row("µs of the serving processes' CPU per keystroke (its echo included), over all rounds", mapValues(runsBySystem, (runs) => round((sum(runs.map((run) => serverMs(run.cpu))) * 1000) / keystrokes(runs), 0)), undefined, {
    byRole: mapValues(runsBySystem, (runs) => perKey(runs, (cpu) => cpu.server)),
    clientsApart: mapValues(runsBySystem, (runs) => perKey(runs, (cpu) => cpu.clients)),
  });
}

/** Every row of the table, from what was measured; `expectedBytes` is what the flood file becomes in a pty. */
export function peerRows(measured: Measured, expectedBytes: number): Record<string, Row> {
  const stops = (results: CtrlCResult[]) => results.map((result) => result.stopMs);
  return {
    ...floodRows(measured.flood, expectedBytes),
    ...Object.fromEntries(Object.entries(measured.busy).map(([count, runs]) => [`busy${count}CpuMsPerDeliveredMB`, busyRow(runs, Number(count))])),
    echoP50Ms: row("ms, keystroke to echo at an idle bash prompt", mapValues(measured.echo, (samples) => round(percentile(samples, 50), 3)), { vs: "sshd", bound: "<=", limit: 3 }),
    echoP99Ms: row("ms, keystroke to echo at an idle bash prompt", mapValues(measured.echo, (samples) => round(percentile(samples, 99), 3)), { vs: "sshd", bound: "<=", limit: 2 }),
    echoCpuUsPerKeystroke: echoCpuRow(measured.echoCpu),
    echoAtTypingPaceP50Ms: row(`ms, keystroke to echo at an idle bash prompt, keys ${TYPING_GAP_MS} ms apart (no target)`, mapValues(measured.echoPaced, (samples) => round(percentile(samples, 50), 3))),
    echoAtTypingPaceP90Ms: row(`ms, keystroke to echo at an idle bash prompt, keys ${TYPING_GAP_MS} ms apart (no target)`, mapValues(measured.echoPaced, (samples) => round(percentile(samples, 90), 3))),
    ctrlCStopP50Ms: row("ms from ^C under yes until the prompt is back", mapValues(measured.ctrlC, (results) => median(stops(results))), { vs: "wetty", bound: "<=", limit: 1 }),
    ctrlCBytesAfterP50: row("characters that arrived after ^C", mapValues(measured.ctrlC, (results) => percentile(results.map((result) => result.charsAfter), 50))),
    spawnP50Ms: row("ms from asking for a terminal until its first prompt byte arrived", mapValues(measured.spawn, median), { vs: "wetty", bound: "<=", limit: 1 }),
  };
}
