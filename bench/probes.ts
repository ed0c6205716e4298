/**
 * The measurements themselves, shared by the node-pty baseline and the product's paths so both
 * are timed by the same code: only how a key is sent and how output arrives differs.
 */

/** Where output text arrives: the probe installs its listener once. */
export type OutputSource = (listener: (text: string) => void) => void;

/** Keystroke-to-echo times in ms: each key is sent once the previous one's echo has arrived. */
export async function echoSamples(keystrokes: number, send: (key: string) => void, output: OutputSource): Promise<number[]> {
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
  }
  return samples;
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
