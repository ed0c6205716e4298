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
