import { sleep } from "../support.js";
import { cpuOfRolesDuring, type RoleCpu } from "../systems/role-cpu.js";
import type { Terminal, TerminalSystem } from "../systems/terminal-system.js";
import { countMarked, type MarkedCount, type Marks } from "./marked-output.js";
import { openMany } from "./open-many.js";

/** Time for the last terminals opened to print their prompts before the load starts. */
const SETTLE_MS = 1_000;
/** Time after the load started before CPU is counted: every producer is running by then. */
const WARMUP_MS = 1_000;
/** A producer stops on its own about this long after the CPU window ended (bash's SECONDS counts whole seconds). */
const STOP_MARGIN_S = 2;
/** How long the producers have to report how much they printed once they stopped. */
const REPORT_TIMEOUT_MS = 20_000;

/**
 * About 40 KB/s from bash builtins only (Coder's scale-test load, as scale.ts): 4,000 characters
 * (a 6-digit line number, then zeros), then a 0.1 s `read -t`, until bash's SECONDS reaches `end`.
 */
export const busyLoop = (seconds: number): string => `end=$((SECONDS+${seconds})); i=0; while ((SECONDS < end)); do printf '%06d%03994d\\n' $((i++)) 0; read -rt 0.1 _; done`;

/**
 * The busy loop typed at a prompt, then the number of lines printed. It stops by itself: typing ^C
 * would flush what the pty holds.
 */
const producer = (seconds: number) => `${busyLoop(seconds)}; echo "produced:$i"\r`;

/** Characters of each line a producer prints, as a pty sends it: 4,000 and \r\n. */
const LINE_CHARS = 4_002;
/** A producer's lines are digits (its first line all zeros); "produced:N" follows the last. */
const MARKS: Marks = { firstLine: "0".repeat(100), lastLineEnd: `${"0".repeat(32)}\r\n`, end: /produced:(\d+)\r\n/ };

/** A busy-terminals run: CPU over the window per delivered MB, and whether every line every terminal printed arrived whole. */
export interface BusyRun {
  terminals: number;
  windowSeconds: number;
  deliveredBytes: number;
  cpu: RoleCpu;
  /** Lines the producers said they printed, and the characters of them that were missing (negative: extra) at the clients. */
  producedLines: number;
  missingChars: number;
  /** Terminals that did not report what they printed within REPORT_TIMEOUT_MS. */
  unreported: number;
}

/** `count` bash terminals of `system`, each read by the bench, each writing about 40 KB/s; CPU of every role over `windowSeconds`. */
export async function busyTerminals(system: TerminalSystem, count: number, windowSeconds: number): Promise<BusyRun> {
  const terminals: Terminal[] = await openMany(system, "bash", count);
  try {
    const counters: MarkedCount[] = terminals.map((terminal) => countMarked(terminal.output, MARKS));
    await sleep(SETTLE_MS);
    const seconds = Math.ceil((WARMUP_MS / 1000) + windowSeconds + STOP_MARGIN_S);
    for (const [i, terminal] of terminals.entries()) {
      counters[i]!.start();
      terminal.send(producer(seconds));
    }
    await sleep(WARMUP_MS);
    const delivered = () => counters.reduce((sum, counter) => sum + counter.seen, 0);
    const { result: deliveredBytes, cpu } = await cpuOfRolesDuring(system, async () => {
      const before = delivered();
      await sleep(windowSeconds * 1000);
      return delivered() - before;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((done) => {
      timer = setTimeout(() => done(undefined), REPORT_TIMEOUT_MS);
    });
    const reports = await Promise.all(counters.map((counter) => Promise.race([counter.done.catch(() => undefined), timeout])));
    clearTimeout(timer);
    const reported = reports.filter((report) => report !== undefined).map(({ chars, mark }) => ({ chars, lines: Number(mark[1]) }));
    return {
      terminals: count,
      windowSeconds,
      deliveredBytes,
      cpu,
      producedLines: reported.reduce((sum, report) => sum + report.lines, 0),
      missingChars: reported.reduce((sum, report) => sum + report.lines * LINE_CHARS - report.chars, 0),
      unreported: count - reported.length,
    };
  } finally {
    await Promise.all(terminals.map((terminal) => terminal.close()));
  }
}
