/** Whether `labels` carry every key of `selector` with the same value (an empty selector matches all). */
export function labelsMatch(labels: Record<string, string>, selector: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

/** Whether two label sets hold the same keys with the same values. */
export function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  return Object.keys(a).length === Object.keys(b).length && labelsMatch(b, a);
}
