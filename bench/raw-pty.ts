import { createRequire } from "node:module";
import type { IPty } from "node-pty";

/** node-pty loaded in the bench's own process: the baseline every path is measured against in the same run. */
const nodePty = createRequire(import.meta.url)("node-pty") as typeof import("node-pty");

/** A pty as the baselines use it: text in, text out, as a terminal emulator in the same process would. */
export interface RawTerminal {
  pty: IPty;
  write(text: string): void;
  onData(listener: (text: string) => void): void;
  kill(): void;
}

/** Spawns `file` in a pty of the bench's own process. */
export function spawnRaw(file: string, args: string[], env: NodeJS.ProcessEnv, size = { cols: 120, rows: 40 }): RawTerminal {
  const pty = nodePty.spawn(file, args, { name: "xterm-256color", ...size, cwd: env.HOME ?? process.cwd(), env: env as Record<string, string> });
  const listeners: Array<(text: string) => void> = [];
  pty.onData((text) => {
    for (const listener of listeners) listener(text);
  });
  return {
    pty,
    write: (text) => pty.write(text),
    onData: (listener) => listeners.push(listener),
    kill: () => {
      try {
        pty.kill("SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}

/** node-pty itself, for the byte-counting baseline (Buffers, no decoding). */
export function spawnRawBytes(file: string, args: string[]): IPty {
  return nodePty.spawn(file, args, { cols: 120, rows: 40, encoding: null as unknown as string });
}
