import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sleep } from "../support.js";
import { cpuOfRolesDuring, type RoleCpu } from "../systems/role-cpu.js";
import type { TerminalSystem } from "../systems/terminal-system.js";
import { countMarked, type Marks } from "./marked-output.js";

/** Each line of the flood file: 63 characters and a newline. */
export const FLOOD_LINE = `${"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ~".slice(0, 63)}\n`;

/** A flood file of `bytes` (a multiple of FLOOD_LINE's length) in a fresh directory, and the bytes a pty turns it into (each \n leaves as \r\n). */
export function createFloodFile(bytes: number): { file: string; expectedBytes: number } {
  const file = join(mkdtempSync(join(tmpdir(), "bench-cat-")), "data.txt");
  writeFileSync(file, FLOOD_LINE.repeat(bytes / FLOOD_LINE.length));
  return { file, expectedBytes: bytes + bytes / FLOOD_LINE.length };
}

/** What bash prints once cat is done; typed with quotes inside, so its echo does not match. */
const DONE = "cat-flood-done";
/** Where the file's output starts and ends, and the mark after it. */
const MARKS: Marks = { firstLine: FLOOD_LINE.slice(0, 32), lastLineEnd: `${FLOOD_LINE.slice(-33, -1)}\r\n`, end: new RegExp(`${DONE}\r\n`) };
/** Time for bash to print its prompt before the command is typed. */
const SETTLE_MS = 300;

/** One `cat` of the flood file through one terminal: seconds from typing the command until the last line arrived, the file's bytes that arrived, and every role's CPU meanwhile. */
export interface FloodRun {
  seconds: number;
  bytes: number;
  cpu: RoleCpu;
}

/** `cat` of `file` typed into a new bash of `system`, with every role's CPU meanwhile; the terminal is closed after its CPU is read. */
export async function catFlood(system: TerminalSystem, file: string): Promise<FloodRun> {
  const terminal = await system.open("bash");
  try {
    await terminal.firstOutput;
    await sleep(SETTLE_MS);
    const { result, cpu } = await cpuOfRolesDuring(system, async () => {
      const count = countMarked(terminal.output, MARKS);
      count.start();
      const started = performance.now();
      terminal.send(`cat ${file}; echo ${DONE.slice(0, 3)}''${DONE.slice(3)}\r`);
      const { chars } = await count.done;
      return { bytes: chars, seconds: (performance.now() - started) / 1000 };
    });
    return { ...result, cpu };
  } finally {
    await terminal.close();
  }
}
