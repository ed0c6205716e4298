import { ctrlCUnderYes } from "./measures/interactive.js";
import { ctrlCStats } from "./probes.js";
import { percentile, report } from "./support.js";
import { nodePtyInProcess } from "./systems/node-pty.js";
import { product } from "./systems/product.js";
import { withSystem } from "./systems/terminal-system.js";
import { ctrlCStopVerdict, valueVerdict } from "./targets.js";

/**
 * ^C during a `yes` flood in `/bin/sh`: ms from sending \x03 until the prompt is back, and the
 * bytes that still arrived; through gateway and runner, and straight from node-pty in the bench's
 * own process (the baseline, measured in the same run by the same probe).
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
/** Bytes allowed to arrive after ^C (p50), from the issue. */
const BYTES_AFTER_P50 = 32 * 1024;

const raw = await withSystem(nodePtyInProcess, (system) => ctrlCUnderYes(system, RUNS));
const gateway = await withSystem(() => product(), (system) => ctrlCUnderYes(system, RUNS));
report({
  benchmark: "ctrl-c-under-flood",
  description: `yes in /bin/sh; ^C sent once 4 MiB of the flood arrived; ${RUNS} runs each, through gateway and runner and from node-pty in the bench's process (same run, same probe)`,
  nodePtyRaw: ctrlCStats(raw),
  gateway: ctrlCStats(gateway),
  ratios: {
    stopP50: ctrlCStopVerdict(gateway.map((r) => r.stopMs), raw.map((r) => r.stopMs)),
    bytesAfterP50: valueVerdict(percentile(gateway.map((r) => r.charsAfter), 50), "<=", BYTES_AFTER_P50),
  },
});
