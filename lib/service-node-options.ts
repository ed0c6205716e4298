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
  // When scrollback was kept as the strings its output came in, each alive for seconds, 100 terminals
  // at 40 KB/s promoted them at the output's rate, and V8's small first old generation made the
  // gateway mark-compact every 2.5 s. Starting it at 64 MiB cut the gateway's CPU per delivered MB by
  // about 15 % (docs/benchmarks.md); 128 bought no more. Scrollback now lives outside the heap
  // (gateway/state/text-rope.ts); what this option buys since has not been measured again.
  "gateway/main": ["--enable-source-maps", "--initial-old-space-size=64", INTERRUPT_BUDGET],
  "launcher/main": ["--enable-source-maps"],
} as const satisfies Record<string, readonly string[]>;

/** The node options for `entry` (a path without extension, such as "gateway/main"); none for entries outside the table. */
export function nodeOptionsFor(entry: string): readonly string[] {
  return (SERVICE_NODE_OPTIONS as Record<string, readonly string[]>)[entry] ?? [];
}

/**
 * glibc malloc's tunables for the runner and the gateway: `hugetlb=1` has malloc ask the kernel for
 * transparent huge pages (`madvise`) for its heap and its large mappings. Output the services keep
 * (the runner's logs, the gateway's scrollback and replay ring) is written into memory touched for
 * the first time, a page fault per 4 KiB, about 20 µs each on a virtual machine; with huge pages a
 * fault maps 2 MiB. With 100 busy terminals the runner then faulted 110–149 pages per MB of output
 * against 372–409, and spent 21.8 against 26.1 ms of CPU per MB on average, less in 3 of 4
 * alternated pairs (docs/benchmarks.md). glibc reads them
 * only when a process starts, so they go in the environment a service starts with; other C
 * libraries ignore them, and a kernel without huge pages leaves malloc as it was.
 */
export const SERVICE_MALLOC_TUNABLES: readonly string[] = ["glibc.malloc.hugetlb=1"];

/** The `name=value` items of a GLIBC_TUNABLES value (joined by colons). */
const tunableItems = (value: string | undefined): string[] => (value ?? "").split(":").filter((item) => item !== "");
const tunableName = (item: string): string => item.split("=")[0]!;

/** GLIBC_TUNABLES for a service: `given` (the caller's own, `name=value` joined by colons) with the services' tunables added, a name given keeping its value. */
export function serviceTunables(given: string | undefined): string {
  const items = tunableItems(given);
  const named = new Set(items.map(tunableName));
  return [...items, ...SERVICE_MALLOC_TUNABLES.filter((item) => !named.has(tunableName(item)))].join(":");
}

/** A service's whole environment: `env` with the services' tunables added to its GLIBC_TUNABLES (serviceTunables). */
export function withServiceTunables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, GLIBC_TUNABLES: serviceTunables(env.GLIBC_TUNABLES) };
}

/** GLIBC_TUNABLES without the services' own tunables (what a service's children get), or undefined when nothing is left. */
export function withoutServiceTunables(value: string | undefined): string | undefined {
  const left = tunableItems(value).filter((item) => !SERVICE_MALLOC_TUNABLES.includes(item));
  return left.length > 0 ? left.join(":") : undefined;
}
