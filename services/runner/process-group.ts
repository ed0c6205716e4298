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
    const stat = readStat(entry);
    if (stat && stat.pgrp === pgid && stat.state !== "Z") return true;
  }
  return false;
}

function readStat(pid: string): { state: string; pgrp: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces and parentheses; the fields after the last ")" are fixed.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0]!, pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}
