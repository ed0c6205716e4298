/**
 * A quarter of V8's default (67,584 bytes of bytecode run between a function's tier-up checks): a
 * service's hot path runs a few thousand times per flood or per thousand keystrokes, so with the
 * default V8 compiled it only during a fresh service's third flood or after thousands of keys, and
 * the first ones cost more. At a quarter, in alternated runs, a flood cost both services 15 % less CPU
 * per MB, and echo after 300 keys had a quarter lower p50 (docs/benchmarks.md). The cost: more is
 * compiled early, so a fresh pair's first hundred or so spawns took about 2.5 ms longer each.
 */
const INTERRUPT_BUDGET = "--interrupt-budget=16896";

/**
 * Options for `node` itself, per service entry point: the one table that the launcher, the
 * package scripts, the container images and the benchmarks start the services with (a unit test
 * holds the scripts and images to it).
 */
export const SERVICE_NODE_OPTIONS = {
  // Under a flood the runner keeps every output chunk alive for a while (log, in-flight messages),
  // so with V8's smallest heap limits it ran a full mark-compact about every 100 ms: the collector
  // took 40 % of its busy time, and each pause let the pty fill up and stall the writer. Starting
  // the old generation at 128 MiB lets it grow to a flood's working set before it collects
  // (docs/benchmarks.md has the before and after).
  "services/runner/main": ["--enable-source-maps", "--initial-old-space-size=128", INTERRUPT_BUDGET],
  // A terminal's scrollback (200,000 characters by default) is kept as the strings its output came
  // in, each alive for seconds: with 100 terminals at 40 KB/s they were promoted at the output's
  // rate, and V8's small first old generation made the gateway mark-compact every 2.5 s. Starting it
  // at 64 MiB cut the gateway's CPU per delivered MB by about 15 % (docs/benchmarks.md); 128 bought no more.
  "gateway/main": ["--enable-source-maps", "--initial-old-space-size=64", INTERRUPT_BUDGET],
  "launcher/main": ["--enable-source-maps"],
} as const satisfies Record<string, readonly string[]>;

/** The node options for `entry` (a path without extension, such as "gateway/main"); none for entries outside the table. */
export function nodeOptionsFor(entry: string): readonly string[] {
  return (SERVICE_NODE_OPTIONS as Record<string, readonly string[]>)[entry] ?? [];
}
