/**
 * The rules `promtool check metrics` applies to Prometheus text that matter for these services,
 * for machines without promtool: every family has HELP and TYPE, once; counters end in `_total`
 * and nothing else does; names and labels are snake_case; units are base units (seconds, bytes),
 * spelled out; no type in a name; `_bucket`, `_count`, `_sum` only on histograms and summaries.
 * Returns one line per problem, as promtool words them (`NAME problem`).
 */
export function lintPrometheusText(text: string): string[] {
  const problems: string[] = [];
  const families = new Map<string, { help: boolean; type?: string }>();
  const family = (name: string) => families.get(name) ?? families.set(name, { help: false }).get(name)!;
  const samples: Array<{ name: string; labels: string[] }> = [];
  for (const line of text.split("\n")) {
    const comment = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
    if (comment) {
      const [, kind, name, rest] = comment;
      const entry = family(name!);
      if (kind === "HELP") {
        if (entry.help) problems.push(`${name} second HELP line`);
        entry.help = (rest ?? "").trim() !== "";
        if (!entry.help) problems.push(`${name} no help text`);
      } else {
        if (entry.type) problems.push(`${name} second TYPE line`);
        entry.type = rest;
      }
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const sample = /^([^{\s]+)(?:\{(.*)\})? \S+/.exec(line);
    if (!sample) {
      problems.push(`unreadable line: ${line}`);
      continue;
    }
    samples.push({ name: sample[1]!, labels: [...(sample[2] ?? "").matchAll(/([^=,\s]+)="(?:[^"\\]|\\.)*"/g)].map((match) => match[1]!) });
  }
  for (const [name, { help, type }] of families) {
    if (!type) problems.push(`${name} has HELP but no TYPE`);
    if (!help && type) problems.push(`${name} no help text`);
    problems.push(...nameProblems(name, type));
  }
  for (const { name, labels } of samples) {
    if (!families.has(familyOf(name, families))) problems.push(`${name} has samples but no HELP or TYPE`);
    for (const label of labels) if (!SNAKE_CASE.test(label)) problems.push(`${name} label names should be written in 'snake_case' not 'camelCase' (${label})`);
  }
  return [...new Set(problems)];
}

const SNAKE_CASE = /^[a-z_][a-z0-9_]*$/;
/** Non-base or abbreviated units, and the base unit to use instead. */
const NON_BASE_UNITS: Record<string, string> = {
  milliseconds: "seconds", microseconds: "seconds", nanoseconds: "seconds", minutes: "seconds", hours: "seconds", days: "seconds", weeks: "seconds",
  kilobytes: "bytes", megabytes: "bytes", gigabytes: "bytes", kibibytes: "bytes", mebibytes: "bytes", gibibytes: "bytes",
  ms: "seconds", us: "seconds", ns: "seconds", sec: "seconds", secs: "seconds", s: "seconds", kb: "bytes", mb: "bytes", gb: "bytes", b: "bytes",
};
const TYPE_WORDS = ["counter", "gauge", "histogram", "summary"];

function nameProblems(name: string, type: string | undefined): string[] {
  const problems: string[] = [];
  if (!SNAKE_CASE.test(name)) problems.push(`${name} metric names should be written in 'snake_case' not 'camelCase'`);
  if (type === "counter" && !name.endsWith("_total")) problems.push(`${name} counter metrics should have "_total" suffix`);
  if (type !== "counter" && name.endsWith("_total")) problems.push(`${name} non-counter metrics should not have "_total" suffix`);
  if (type !== "histogram" && type !== "summary" && /_(bucket|count|sum)$/.test(name)) problems.push(`${name} non-histogram and non-summary metrics should not have "_bucket", "_count" or "_sum" suffix`);
  const words = name.split("_");
  for (const word of words) {
    const base = NON_BASE_UNITS[word];
    if (base) problems.push(`${name} use base unit "${base}" instead of "${word}"`);
    if (TYPE_WORDS.includes(word)) problems.push(`${name} metric name should not include type '${word}'`);
  }
  return problems;
}

/** The family a sample belongs to: its own name, or a histogram's or summary's without `_bucket`, `_count` or `_sum`. */
function familyOf(sample: string, families: ReadonlyMap<string, unknown>): string {
  if (families.has(sample)) return sample;
  return sample.replace(/_(bucket|count|sum)$/, "");
}
