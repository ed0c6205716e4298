import { spawnSync } from "node:child_process";
import { ROOT } from "./support.js";

/** Runs every benchmark in its own process, one after another; each prints one JSON line. */
const BENCHMARKS = ["throughput", "echo-latency", "floor", "ctrl-c", "spawn", "scale", "runner-read-cost", "gateway-state-cost", "stalled-client", "reconnect", "runner-bursts", "frame-burst", "gateways", "peers"];
const only = process.argv.slice(2);
for (const name of only.length ? only : BENCHMARKS) {
  const result = spawnSync(process.execPath, ["--import", "tsx", `bench/${name}.ts`], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) process.stderr.write(`bench ${name} failed with ${result.status}\n`);
}
