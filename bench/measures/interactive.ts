import { createCtrlCProbe, echoSamples, repeatCtrlC, type CtrlCResult } from "../probes.js";
import { sleep } from "../support.js";
import { cpuOfRolesDuring, type RoleCpu } from "../systems/role-cpu.js";
import type { TerminalSystem } from "../systems/terminal-system.js";

/** Time for bash to print its prompt (or for `exec` to replace it) before keys are timed, as echo-latency.ts and floor.ts give it. */
const SETTLE_MS = 800;
/**
 * Unmeasured keystrokes first, until a node service's keystroke path is compiled: V8 keeps
 * optimising functions on its worker threads for thousands of keystrokes (through the runner alone:
 * 56 optimisations in the first 300 keys, 178 in the next 1,500, 4 after 6,000), and on two cores
 * those threads delay whichever process is woken next: after 300 keys the runner's p99 was 3.8 ms,
 * after 6,000 it was 0.63 ms. Every system gets the same warm-up.
 */
export const WARMUP_KEYSTROKES = Number(process.env.BENCH_WARMUP_KEYSTROKES ?? 6000);

/** An idle bash prompt of a system, warmed up: keystroke-to-echo times on demand, keys back to back or `gapMs` apart. */
export interface EchoPrompt {
  samples(keystrokes: number, gapMs?: number): Promise<number[]>;
  close(): Promise<void>;
}

/** Opens bash (with the runner's integration script) through `system` and sends WARMUP_KEYSTROKES unmeasured keys. */
export async function openEchoPrompt(system: TerminalSystem): Promise<EchoPrompt> {
  const terminal = await system.open("bash");
  let listener: (text: string) => void = () => {};
  terminal.output((text) => listener(text));
  await terminal.firstOutput;
  await sleep(SETTLE_MS);
  const samples = (keystrokes: number, gapMs?: number) => echoSamples(keystrokes, terminal.send, (l) => (listener = l), gapMs);
  await samples(WARMUP_KEYSTROKES);
  return { samples, close: () => terminal.close() };
}

/** How long a person's typing leaves between one key's echo and the next key: about as fast as anyone types, and long enough for every process on the path to go idle. */
export const TYPING_GAP_MS = 50;

/**
 * Keystroke-to-echo times at an idle bash prompt of `system` (ms), keys back to back, and the CPU
 * every role spent on those keystrokes (not the warm-up's); then `pacedKeystrokes` more at a typing
 * pace (TYPING_GAP_MS apart), where each key finds the processes on its path asleep.
 */
export async function echoAtPrompt(system: TerminalSystem, keystrokes: number, pacedKeystrokes = 0): Promise<{ samples: number[]; cpu: RoleCpu; paced: number[] }> {
  const prompt = await openEchoPrompt(system);
  try {
    const { result: samples, cpu } = await cpuOfRolesDuring(system, () => prompt.samples(keystrokes));
    const paced = await prompt.samples(pacedKeystrokes, TYPING_GAP_MS);
    return { samples, cpu, paced };
  } finally {
    await prompt.close();
  }
}

/** Time for `yes` to take over its terminal before keys are timed beside it. */
const FLOOD_SETTLE_MS = 800;

/**
 * Echo at an idle bash prompt of `system`, quiet and then beside `yes` in another terminal of it;
 * `timed` runs each phase's keystrokes (and may read CPU meanwhile). `floodMBPerSecond` is what the
 * flood delivered to the client while the keys beside it were timed: a system that moves the flood
 * faster has more of it to handle between keystrokes, so echo beside it is read with that figure.
 */
export async function echoQuietAndBesideYes<T>(system: TerminalSystem, keystrokes: number, timed: (samples: () => Promise<number[]>) => Promise<T>): Promise<{ quiet: T; busy: T; floodMBPerSecond: number }> {
  const prompt = await openEchoPrompt(system);
  try {
    const quiet = await timed(() => prompt.samples(keystrokes));
    const flood = await system.open("yes");
    let flooded = 0;
    flood.output((text) => (flooded += text.length));
    try {
      await sleep(FLOOD_SETTLE_MS);
      const [startChars, started] = [flooded, performance.now()];
      const busy = await timed(() => prompt.samples(keystrokes));
      if (flooded === 0) throw new Error("the flood beside the prompt delivered nothing");
      // `yes` prints ASCII only, so its characters are its bytes.
      const floodMBPerSecond = (flooded - startChars) / 1e6 / ((performance.now() - started) / 1000);
      return { quiet, busy, floodMBPerSecond: Math.round(floodMBPerSecond * 100) / 100 };
    } finally {
      await flood.close();
    }
  } finally {
    await prompt.close();
  }
}

/** `runs` ^C under a `yes` flood in `/bin/sh` of `system` (probes.ts), one after another in one terminal. */
export async function ctrlCUnderYes(system: TerminalSystem, runs: number): Promise<CtrlCResult[]> {
  const terminal = await system.open("sh");
  try {
    await terminal.firstOutput;
    await sleep(SETTLE_MS);
    return await repeatCtrlC(createCtrlCProbe(terminal.send, terminal.output), runs);
  } finally {
    await terminal.close();
  }
}

/** ms from asking `system` for a bash terminal until its first byte (the first prompt's) reached the bench. */
export async function spawnToFirstByte(system: TerminalSystem): Promise<number> {
  const started = performance.now();
  const terminal = await system.open("bash");
  await terminal.firstOutput;
  const ms = performance.now() - started;
  await terminal.close();
  return ms;
}
