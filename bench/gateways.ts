import { closeAllTerminals, startFleet } from "./gateway-fleet.js";
import { failoverRuns, type FailoverRun } from "./gateways-failover.js";
import { loadRound, perDeliveredMB, type LoadRound, type LoadSettings } from "./gateways-load.js";
import { propagation, SEEN_WITHIN_MS } from "./gateways-propagation.js";
import { report, round, startRunner, timings } from "./support.js";
import { ratioVerdict, valueVerdict } from "./targets.js";

/**
 * Two runners behind 1 and then 3 gateways started with the same flags: CPU per delivered MB under
 * many terminals of which few are watched, the time until a client of a killed gateway is served by
 * another, and how long a title or claim change takes to reach a client of another gateway.
 */
const LOAD: LoadSettings = {
  terminals: Number(process.env.BENCH_GATEWAYS_TERMINALS ?? 200),
  watched: Number(process.env.BENCH_GATEWAYS_WATCHED ?? 20),
  warmupSeconds: Number(process.env.BENCH_GATEWAYS_WARMUP_SECONDS ?? 3),
  seconds: Number(process.env.BENCH_GATEWAYS_SECONDS ?? 10),
};
/** Rounds of the load, each one setup with 1 gateway then one with 3, so a machine that drifts affects both. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const FAILOVERS = Number(process.env.BENCH_RUNS ?? 5);
const SAMPLES = Number(process.env.BENCH_GATEWAYS_SAMPLES ?? 50);
const SETUPS = [1, 3];
const RUNNERS = 2;
/** Gateways that follow only what is read spend little on the unwatched terminals: 3 gateways may cost at most this much more per delivered MB than 1. */
const GATEWAY_COST_RATIO_TARGET = 1.2;
/**
 * What a gateway may spend on terminals nobody reads through it, in percent of one core, with all of
 * the load running: nothing per byte, only its record watch and timers (before gateways followed only
 * what was read, the creating gateway spent 26 % of a core on two unwatched floods).
 */
const UNWATCHED_CPU_PERCENT_TARGET = 1;
/** A replica must serve a moved client before a lone gateway could have restarted: the fastest restart measured before replicas was 2.7 s. */
const FAILOVER_TARGET_MS = 2_700;
/** A title or claim change should reach every client about as soon as a person would look: a quarter of a second. */
const PROPAGATION_P99_TARGET_MS = 250;

const progress = (text: string) => process.stderr.write(`gateways: ${text}\n`);
const runners = [];
for (let i = 0; i < RUNNERS; i++) runners.push(await startRunner("/bin/bash"));
const runnerUrls = runners.map((runner) => runner.address);
try {
  const rounds: LoadRound[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const gateways of SETUPS) {
      progress(`round ${r + 1}/${ROUNDS}, ${gateways} gateway(s): ${LOAD.terminals} terminals, ${LOAD.watched} watched, ${LOAD.seconds} s`);
      rounds.push(await loadRound(runners, gateways, LOAD, `${r}-${gateways}`));
      progress(JSON.stringify(rounds.at(-1)!.report));
    }
  }
  progress(`unwatched: 3 gateways, ${LOAD.terminals} terminals, none watched, ${LOAD.seconds} s`);
  const unwatched = await loadRound(runners, 3, { ...LOAD, watched: 0 }, "unwatched");
  const gatewayCpuPercent = Object.fromEntries(
    Object.entries(unwatched.cpuMs)
      .filter(([name]) => name.startsWith("gateway"))
      .map(([name, ms]) => [name, round((ms / (LOAD.seconds * 1000)) * 100, 2)]),
  );
  const bySetup = Object.fromEntries(SETUPS.map((gateways) => [gateways, setupTotals(rounds.filter((entry) => entry.gateways === gateways))]));
  const cost = (gateways: number, role: string) => bySetup[gateways]!.cpuMsPerDeliveredMB[role] ?? Number.NaN;

  const fleet = await startFleet(runnerUrls, 3, []);
  let changes: Record<string, any>;
  let failovers: FailoverRun[];
  try {
    progress(`propagation: ${SAMPLES} titles and ${SAMPLES} claim handovers`);
    changes = await propagation(fleet, SAMPLES);
    progress(`failover: ${FAILOVERS} runs`);
    failovers = await failoverRuns(fleet, FAILOVERS);
  } finally {
    await fleet.stop();
    await closeAllTerminals(runnerUrls);
  }
  // Only a client that was served by its gateway before the kill fails over; the other runs time a first connection.
  const failedOver = failovers.filter((run) => run.servedBeforeKill);
  const served = failedOver.filter((run) => run.freshOutputMs !== undefined);
  const freshOutput = timings(served.map((run) => run.freshOutputMs!));
  const propagationTargets = (kind: "title" | "claim") =>
    Object.fromEntries(
      (["viaTerminalChannel", "viaRootList"] as const).map((path) => {
        const figures = changes[kind][path];
        return [path, { allSeen: valueVerdict(figures.notSeenWithin5s, "<=", 0), p99: valueVerdict(figures.p99 ?? Number.NaN, "<=", PROPAGATION_P99_TARGET_MS) }];
      }),
    );
  report({
    benchmark: "gateways",
    description: `${RUNNERS} runners behind 1 and 3 gateways started with the same flags: ${LOAD.terminals} bash terminals of about 40 KB/s each, ${LOAD.watched} of them watched by one client each, CPU over ${LOAD.seconds} s after ${LOAD.warmupSeconds} s; ${FAILOVERS} failovers (SIGKILL of the client's gateway); ${SAMPLES} title and ${SAMPLES} claim changes seen from another gateway`,
    load: {
      rounds: rounds.map((entry) => entry.report),
      bySetup,
      gatewayCostRatio: ratioVerdict(cost(3, "gateways"), cost(1, "gateways"), "<=", GATEWAY_COST_RATIO_TARGET),
      runnerCostRatio: round(cost(3, "runners") / cost(1, "runners")),
      totalCostRatio: round(cost(3, "total") / cost(1, "total")),
      unwatched: {
        cpuMs: unwatched.cpuMs,
        gatewayCpuPercent,
        target: valueVerdict(Math.max(...Object.values(gatewayCpuPercent)), "<=", UNWATCHED_CPU_PERCENT_TARGET),
      },
    },
    failover: {
      runs: failovers,
      notServedBeforeKill: failovers.length - failedOver.length,
      served: { value: served.length, target: `== ${FAILOVERS}`, met: served.length === FAILOVERS },
      snapshotMs: timings(served.map((run) => run.snapshotMs!)),
      freshOutputMs: freshOutput,
      freshOutputMaxTarget: valueVerdict(freshOutput.max ?? Number.NaN, "<=", FAILOVER_TARGET_MS),
    },
    propagation: { ...changes, seenWithinMs: SEEN_WITHIN_MS, targets: { title: propagationTargets("title"), claim: propagationTargets("claim") } },
  });
} finally {
  await Promise.all(runners.map((runner) => runner.stop()));
}

/** One setup's rounds together: delivered MB, CPU ms per role, CPU ms per delivered MB. */
function setupTotals(entries: LoadRound[]): { rounds: number; deliveredMB: number; cpuMs: Record<string, number>; cpuMsPerDeliveredMB: Record<string, number | null> } {
  const deliveredMB = entries.reduce((sum, entry) => sum + entry.deliveredMB, 0);
  const cpuMs: Record<string, number> = {};
  for (const entry of entries) for (const [name, ms] of Object.entries(entry.cpuMs)) cpuMs[name] = (cpuMs[name] ?? 0) + ms;
  const perMB = perDeliveredMB(cpuMs, deliveredMB);
  return { rounds: entries.length, deliveredMB: round(deliveredMB, 3), cpuMs: Object.fromEntries(Object.entries(cpuMs).map(([name, ms]) => [name, Math.round(ms)])), cpuMsPerDeliveredMB: perMB };
}
