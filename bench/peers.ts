import { busyTerminals } from "./measures/busy-terminals.js";
import { catFlood, createFloodFile } from "./measures/cat-flood.js";
import { ctrlCUnderYes, echoAtPrompt, spawnToFirstByte, TYPING_GAP_MS } from "./measures/interactive.js";
import { peerRows, type Measured } from "./peers-rows.js";
import { report } from "./support.js";
import { oneProcessFloor, twoProcessFloor } from "./systems/floor-shapes.js";
import { nodePtyInProcess } from "./systems/node-pty.js";
import { product } from "./systems/product.js";
import { sshd } from "./systems/sshd.js";
import type { TerminalSystem } from "./systems/terminal-system.js";
import { wetty } from "./systems/wetty.js";

/**
 * This project beside the tools a user would run instead, in one run: wetty (from npm, one node
 * process), Debian's sshd (`ssh -tt` to a local sshd), and the lower bounds (node-pty in the
 * bench's process, the floor shapes of bench/floor/). Every measurement runs through every system
 * in turn, round after round; a peer that cannot start is listed with the reason.
 */
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env("BENCH_ROUNDS", 2);
const FLOOD_BYTES = env("BENCH_PEERS_FLOOD_MIB", 64) * 1024 * 1024;
/** Measured `cat` runs per system and round; each system's first one is preceded by one unmeasured (its output path compiles, its heap grows). */
const FLOOD_RUNS = env("BENCH_PEERS_FLOOD_RUNS", 1);
const BUSY_TERMINALS = (process.env.BENCH_PEERS_BUSY_TERMINALS ?? "100,20").split(",").map(Number);
const BUSY_SECONDS = env("BENCH_PEERS_BUSY_SECONDS", 5);
const KEYSTROKES = env("BENCH_KEYSTROKES", 1000);
const PACED_KEYSTROKES = env("BENCH_PEERS_PACED_KEYSTROKES", 100);
const CTRL_C_RUNS = env("BENCH_PEERS_CTRL_C_RUNS", 8);
const SPAWN_RUNS = env("BENCH_PEERS_SPAWN_RUNS", 10);

const STARTERS: Record<string, () => Promise<TerminalSystem & { version?: string }>> = {
  product: () => product(),
  wetty,
  sshd,
  nodePty: nodePtyInProcess,
  oneProcessFloor,
  twoProcessFloor,
};
/**
 * The many-terminals load through the product and the peers; the floors only with
 * BENCH_PEERS_BUSY_FLOORS=1 (they add about a minute a round and carry no target, but tell what the
 * bare two-process shape costs under the same load).
 */
const BUSY_SYSTEMS = new Set(["product", "wetty", "sshd", "nodePty", ...(process.env.BENCH_PEERS_BUSY_FLOORS === "1" ? ["oneProcessFloor", "twoProcessFloor"] : [])]);
const chosen = process.env.BENCH_PEERS_SYSTEMS?.split(",") ?? Object.keys(STARTERS);
const MEASUREMENTS = ["flood", "busy", "echo", "ctrlC", "spawn"];
const measuring = new Set(process.env.BENCH_PEERS_MEASUREMENTS?.split(",") ?? MEASUREMENTS);
for (const name of measuring) if (!MEASUREMENTS.includes(name)) throw new Error(`BENCH_PEERS_MEASUREMENTS: no measurement named ${name} (${MEASUREMENTS.join(", ")})`);

const systems = new Map<string, TerminalSystem>();
const versions: Record<string, string> = {};
const skipped: Record<string, string> = {};
for (const name of chosen) {
  const start = STARTERS[name];
  if (!start) throw new Error(`BENCH_PEERS_SYSTEMS: no system named ${name} (${Object.keys(STARTERS).join(", ")})`);
  try {
    const system = await start();
    systems.set(name, system);
    if (system.version) versions[name] = system.version;
  } catch (error) {
    skipped[name] = (error as Error).message;
  }
}

const { file, expectedBytes } = createFloodFile(FLOOD_BYTES);
const measured: Measured = { flood: {}, busy: Object.fromEntries(BUSY_TERMINALS.map((count) => [count, {}])), echo: {}, echoPaced: {}, echoCpu: {}, ctrlC: {}, spawn: {} };
const failures: Array<{ system: string; measurement: string; round: number; error: string }> = [];
const started = performance.now();
const push = <T>(into: Record<string, T[]>, name: string, values: T[]): void => void (into[name] ??= []).push(...values);

/** Runs one measurement through one system; a failure is recorded and the bench goes on. BENCH_VERBOSE=1 prints progress. */
async function attempt(name: string, measurement: string, round: number, work: () => Promise<void>): Promise<void> {
  if (!measuring.has(measurement.replace(/\d+$/, ""))) return;
  if (process.env.BENCH_VERBOSE) process.stderr.write(`${Math.round((performance.now() - started) / 1000)} s: round ${round}, ${measurement} through ${name}\n`);
  try {
    await work();
  } catch (error) {
    failures.push({ system: name, measurement, round, error: (error as Error).message });
  }
}

try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, system] of systems) {
      await attempt(name, "flood", round, async () => {
        if (round === 0) await catFlood(system, file);
        for (let i = 0; i < FLOOD_RUNS; i++) push(measured.flood, name, [await catFlood(system, file)]);
      });
    }
    for (const count of BUSY_TERMINALS) {
      for (const [name, system] of systems) {
        if (BUSY_SYSTEMS.has(name)) await attempt(name, `busy${count}`, round, async () => push(measured.busy[count]!, name, [await busyTerminals(system, count, BUSY_SECONDS)]));
      }
    }
    for (const [name, system] of systems) {
      await attempt(name, "echo", round, async () => {
        const { samples, cpu, paced } = await echoAtPrompt(system, KEYSTROKES, PACED_KEYSTROKES);
        push(measured.echo, name, samples);
        push(measured.echoPaced, name, paced);
        push(measured.echoCpu, name, [{ keystrokes: samples.length, cpu }]);
      });
    }
    for (const [name, system] of systems) await attempt(name, "ctrlC", round, async () => push(measured.ctrlC, name, await ctrlCUnderYes(system, CTRL_C_RUNS)));
    for (const [name, system] of systems) {
      await attempt(name, "spawn", round, async () => {
        for (let i = 0; i < SPAWN_RUNS; i++) push(measured.spawn, name, [await spawnToFirstByte(system)]);
      });
    }
  }
} finally {
  for (const system of systems.values()) await system.stop();
}

report({
  benchmark: "peers",
  description: `this project (runner + gateway, read over AHP) beside wetty, sshd (ssh -tt) and the lower bounds (node-pty in the bench's process, the floor shapes), in one run, ${ROUNDS} rounds, each running every measurement through every system in turn: cat of a ${FLOOD_BYTES / 2 ** 20} MiB file typed into bash (${FLOOD_RUNS} measured per round after one unmeasured); ${BUSY_TERMINALS.join(" and ")} bash terminals each printing 4,000 characters every 0.1 s, each read, CPU over ${BUSY_SECONDS} s; echo at an idle bash prompt (${KEYSTROKES} keys back to back per round, then ${PACED_KEYSTROKES} at a typing pace, ${TYPING_GAP_MS} ms apart); ^C under yes in /bin/sh (${CTRL_C_RUNS} per round); a new terminal to its first byte (${SPAWN_RUNS} per round)`,
  seconds: Math.round((performance.now() - started) / 1000),
  systems: { measured: [...systems.keys()], versions, skipped },
  rows: peerRows(measured, expectedBytes),
  ...(failures.length ? { failures } : {}),
});
