import { readdirSync, readFileSync } from "node:fs";
import { signalGroup } from "./signals.js";

/**
 * True while a process group still has a member that is not a zombie. Orphaned members are
 * reparented to init, which reaps their zombies on its own schedule (in some containers only
 * every second or so); a zombie is already dead, so waiting for init would only slow closes down.
 * Without /proc every member, zombie or not, counts.
 */
export function groupHasLiveMembers(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const stat = processStat(Number(entry));
    if (stat && stat.pgrp === pgid && stat.state !== "Z") return true;
  }
  return false;
}

/** What /proc/<pid>/stat says of a process: its state, process group, and start time (clock ticks after boot, which with the pid names one process for good). */
export interface ProcessStat {
  state: string;
  pgrp: number;
  startTime: number;
}

/** The state, group and start time of a process; undefined when it does not exist (or there is no /proc). */
export function processStat(pid: number): ProcessStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces and parentheses; the fields after the last ")" are fixed
    // (state is field 3 of the line, the group 5, the start time 22).
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0]!, pgrp: Number(fields[2]), startTime: Number(fields[19]) };
  } catch {
    return undefined;
  }
}
