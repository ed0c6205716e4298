import { readdirSync, readFileSync } from "node:fs";

/** One process as /proc/<pid>/stat describes it. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  state: string;
  pgrp: number;
  session: number;
  /** Its niceness (field 19 of the line). */
  nice: number;
}

/** The process with this pid, or undefined when there is none. */
export function processEntry(pid: number): ProcessEntry | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses; the fields after the last ")" are fixed.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const [state, ppid, pgrp, session] = fields;
    return { pid, ppid: Number(ppid), state: state!, pgrp: Number(pgrp), session: Number(session), nice: Number(fields[16]) };
  } catch {
    return undefined;
  }
}

/** Every process on the machine. */
export function processTable(): ProcessEntry[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => processEntry(Number(entry)))
    .filter((entry): entry is ProcessEntry => entry !== undefined);
}

/** True when the process has ended: there is none with this pid, or only its zombie, waiting to be reaped. */
export function isGone(pid: number): boolean {
  const entry = processEntry(pid);
  return entry === undefined || entry.state === "Z";
}

/** Sends SIGKILL to each process still there, ignoring those already gone. */
export function killAll(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}
