import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";

/**
 * Summarises V8 CPU profiles (`BENCH_PROF=DIR` writes one per service) into the functions with the
 * most self time, as one JSON line per profile, so figures can be quoted:
 *   node --import tsx bench/profile-summary.ts DIR-or-file.cpuprofile… [--top N]
 */
const DEFAULT_TOP = 15;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Entries V8 books time to that are not JavaScript functions: waiting, native work, the collector. */
const PSEUDO_FUNCTIONS = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"]);

/** Self time per function (name, file and line), busiest first; idle time is reported apart. */
export function summarise(profile: CpuProfile, top: number) {
  const byNode = new Map<number, ProfileNode>(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byNode.get(profile.samples[i]!);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = PSEUDO_FUNCTIONS.has(functionName) ? functionName : `${functionName || "(anonymous)"} ${shortUrl(url)}:${lineNumber + 1}`;
    // timeDeltas[i] is the time since the previous sample: it belongs to sample i.
    selfUs.set(key, (selfUs.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const idleUs = selfUs.get("(idle)") ?? 0;
  selfUs.delete("(idle)");
  selfUs.delete("(root)");
  const busyUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const functions = [...selfUs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, us]) => ({ function: fn, selfMs: Math.round(us / 1000), shareOfBusy: Math.round((us / busyUs) * 1000) / 1000 }));
  return { wallMs: Math.round((profile.endTime - profile.startTime) / 1000), busyMs: Math.round(busyUs / 1000), idleMs: Math.round(idleUs / 1000), top: functions };
}

/** The part of a script URL worth reading: below node_modules or dist/app, or node's own `node:…` modules. */
function shortUrl(url: string): string {
  if (!url) return "(native)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) return url.slice(modules + "node_modules/".length);
  const app = url.indexOf("dist/app/");
  return app >= 0 ? url.slice(app + "dist/app/".length) : url.replace(/^file:\/\//, "");
}

function profilesIn(paths: string[]): string[] {
  return paths.flatMap((path) =>
    statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((name) => name.endsWith(".cpuprofile"))
          .sort()
          .map((name) => join(path, name))
      : [path],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf("--top");
  const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : DEFAULT_TOP;
  if (args.length === 0) {
    process.stderr.write("usage: bench/profile-summary.ts DIR-or-file.cpuprofile… [--top N]\n");
    process.exit(2);
  }
  for (const file of profilesIn(args)) {
    const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
    process.stdout.write(`${JSON.stringify({ profile: basename(file), ...summarise(profile, top) })}\n`);
  }
}
