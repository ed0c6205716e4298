import { percentile, round, sleep } from "./support.js";

/**
 * The measurements themselves, shared by the node-pty baseline and the product's paths so both
 * are timed by the same code: only how a key is sent and how output arrives differs.
 */

/** Where output text arrives: the probe installs its listener once. */
export type OutputSource = (listener: (text: string) => void) => void;

/**
 * Keystroke-to-echo times in ms: each key is sent once the previous one's echo has arrived, and
 * `gapMs` after it when given (a person's typing pace instead of keys back to back).
 */
export async function echoSamples(keystrokes: number, send: (key: string) => void, output: OutputSource, gapMs = 0): Promise<number[]> {
  let waiting: (() => void) | undefined;
  output(() => waiting?.());
  const samples: number[] = [];
  for (let i = 0; i < keystrokes; i++) {
    // A letter, then DEL to erase it: the shell's line editor echoes both at once, the line stays empty and nothing runs.
    const key = i % 2 === 0 ? "a" : "\x7f";
    const echoed = new Promise<void>((done) => (waiting = done));
    const started = performance.now();
    send(key);
    await echoed;
    waiting = undefined;
    samples.push(performance.now() - started);
    if (gapMs > 0) await sleep(gapMs);
  }
  return samples;
}

/** The p50 and p99 of echo times, in ms, as every echo figure is printed. */
export function echoStats(samples: number[]): { p50: number; p99: number } {
  return { p50: round(percentile(samples, 50), 3), p99: round(percentile(samples, 99), 3) };
}

/** Flood output (characters) that must have arrived before ^C is sent, so the flood is at full speed. */
export const FLOOD_BEFORE_CTRL_C_CHARS = 4 * 1024 * 1024;
/** The `/bin/sh` prompt back after ^C (PS1="$ "): `yes` is gone and nothing more of the flood is coming. */
const PROMPT_AFTER_CTRL_C = /\r\n\$ $|\^C\r?\n?\$ $/;
/** Characters of output kept to look for the prompt in (it may arrive split across chunks). */
const TAIL_CHARS = 64;

/** One ^C under a `yes` flood in a `/bin/sh` prompt: ms from sending \x03 to the prompt, and the characters that arrived meanwhile. */
export interface CtrlCResult {
  stopMs: number;
  charsAfter: number;
}

/** A probe for repeated ^C runs on one shell: install once, then `run()` each time. */
export function createCtrlCProbe(send: (text: string) => void, output: OutputSource): { run(): Promise<CtrlCResult> } {
  let onText: (text: string) => void = () => {};
  output((text) => onText(text));
  return {
    run: () =>
      new Promise((done) => {
        let received = 0;
        let sentAt = 0;
        let after = 0;
        let tail = "";
        onText = (text) => {
          received += text.length;
          if (sentAt === 0) {
            if (received >= FLOOD_BEFORE_CTRL_C_CHARS) {
              sentAt = performance.now();
              send("\u0003");
            }
            return;
          }
          after += text.length;
          tail = (tail + text).slice(-TAIL_CHARS);
          if (PROMPT_AFTER_CTRL_C.test(tail)) {
            onText = () => {};
            done({ stopMs: performance.now() - sentAt, charsAfter: after });
          }
        };
        send("yes\r");
      }),
  };
}

/** Pause between ^C runs, so each flood starts from a quiet terminal. */
const BETWEEN_CTRL_C_RUNS_MS = 50;

/** `runs` ^C runs of one probe, one after another. */
export async function repeatCtrlC(probe: { run(): Promise<CtrlCResult> }, runs: number): Promise<CtrlCResult[]> {
  const results: CtrlCResult[] = [];
  for (let i = 0; i < runs; i++) {
    results.push(await probe.run());
    await sleep(BETWEEN_CTRL_C_RUNS_MS);
  }
  return results;
}

/** ^C results as every ^C figure is printed: stop time p50 and p99 in ms, characters after ^C p50 and max. */
export function ctrlCStats(results: CtrlCResult[]): { stopMs: { p50: number; p99: number }; bytesAfterCtrlC: { p50: number; max: number } } {
  const stops = results.map((r) => r.stopMs);
  const after = results.map((r) => r.charsAfter);
  return { stopMs: { p50: round(percentile(stops, 50)), p99: round(percentile(stops, 99)) }, bytesAfterCtrlC: { p50: percentile(after, 50), max: Math.max(...after) } };
}
