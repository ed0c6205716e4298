import { percentile } from "./support.js";

/** A figure set against its target: the value, the target as text (">= 0.5", "<= 15") and whether it was met. */
export interface Verdict {
  ratio?: number;
  value?: number;
  target: string;
  met: boolean;
}

const rounded = (value: number): number => Math.round(value * 100) / 100;

/** `measured / baseline` (both from the same run) against a bound: "<=" for costs and latencies, ">=" for rates. */
export function ratioVerdict(measured: number, baseline: number, bound: "<=" | ">=", limit: number): Verdict {
  const ratio = rounded(measured / baseline);
  return { ratio, target: `${bound} ${limit}`, met: bound === "<=" ? ratio <= limit : ratio >= limit };
}

/** An absolute figure (CPU ms per MB, bytes) against a bound. */
export function valueVerdict(value: number, bound: "<=" | ">=", limit: number): Verdict {
  return { value: rounded(value), target: `${bound} ${limit}`, met: bound === "<=" ? value <= limit : value >= limit };
}

/** The echo targets: p50 at most 2.5 and p99 at most 2 times node-pty's, both sets of echo times from the same run. */
export function echoVerdicts(measured: number[], baseline: number[]): { p50: Verdict; p99: Verdict } {
  return {
    p50: ratioVerdict(percentile(measured, 50), percentile(baseline, 50), "<=", 2.5),
    p99: ratioVerdict(percentile(measured, 99), percentile(baseline, 99), "<=", 2),
  };
}

/** The issue's ^C target: the stop time's p50 at most 2 times node-pty's, both from the same run. */
export function ctrlCStopVerdict(measuredStopsMs: number[], baselineStopsMs: number[]): Verdict {
  return ratioVerdict(percentile(measuredStopsMs, 50), percentile(baselineStopsMs, 50), "<=", 2);
}
