import { accessSync, constants, readFileSync, writeFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { ConfigError } from "../../../lib/cli.js";
import { MAX_NICE } from "../config.js";
import type { ProcessSpec } from "./terminal-process.js";

/** How long to wait for a new process to lead a session of its own (its first instructions do that, before it execs). */
const SESSION_WAIT_MS = 200;
/** Pause between looks while it has not yet. */
const SESSION_POLL_MS = 2;

/** Reading and writing a process's autogroup (`/proc/PID/autogroup`); tests give their own. */
export interface AutogroupFiles {
  read(pid: number | "self"): string;
  write(pid: number, text: string): void;
}

const PROC_AUTOGROUP: AutogroupFiles = {
  read: (pid) => readFileSync(`/proc/${pid}/autogroup`, "utf8"),
  write: (pid, text) => writeFileSync(`/proc/${pid}/autogroup`, text),
};

/** The group and niceness in an autogroup file ("/autogroup-123 nice 0"); undefined when it says something else. */
export function parseAutogroup(text: string): { group: string; nice: number } | undefined {
  const match = /^(\/autogroup-\d+)\s+nice\s+(-?\d+)\s*$/.exec(text);
  return match ? { group: match[1]!, nice: Number(match[2]) } : undefined;
}

/** coreutils' nice: it adds to its niceness, then execs the program (same pid, same pty or pipes, everything it starts inherits it). */
export const NICE_PROGRAM = "/usr/bin/nice";

/**
 * The spec that starts the process `nice` nicer than the runner. It is set in the process itself,
 * before its program runs, so nothing it starts can run before it is lowered (setting it from the
 * runner after the spawn left a child a program forked at once at the runner's priority), and an
 * account cannot lower it again.
 */
export function withNiceness(spec: ProcessSpec, nice: number): ProcessSpec {
  if (nice === 0) return spec;
  return { ...spec, file: NICE_PROGRAM, args: ["-n", String(nice), "--", spec.file, ...spec.args] };
}

/** Throws ConfigError when processes cannot be started nicer (NICE_PROGRAM cannot be run). */
export function checkNiceProgram(nice: number): void {
  if (nice === 0) return;
  try {
    accessSync(NICE_PROGRAM, constants.X_OK);
  } catch {
    throw new ConfigError(`--process-nice ${nice} needs ${NICE_PROGRAM} (coreutils), which cannot be run here; install coreutils, or give --process-nice 0`);
  }
}

/** What became of setting a session group's niceness. */
export type GroupWrite = "written" | "shares-runner-group" | "unavailable";

/**
 * Sets the niceness of `pid`'s session group (autogroup) to `offset` above the runner's group,
 * provided the process leads a session of its own: never while it still shares the runner's group
 * (in the moment after the fork, before its setsid), which would change the runner's. "unavailable":
 * no autogroup in this kernel, or the process is gone.
 */
export function setSessionGroupNice(pid: number, offset: number, files: AutogroupFiles = PROC_AUTOGROUP): GroupWrite {
  try {
    const own = parseAutogroup(files.read("self"));
    const theirs = parseAutogroup(files.read(pid));
    if (!own || !theirs) return "unavailable";
    if (theirs.group === own.group) return "shares-runner-group";
    files.write(pid, String(Math.min(MAX_NICE, own.nice + offset)));
    return "written";
  } catch {
    return "unavailable";
  }
}

/**
 * Where the kernel groups CPU time by session (autogroup, the default on desktop and server kernels
 * outside containers), lowers a new terminal's session group by `nice` below the runner's: there the
 * group's niceness is what weighs against the runner's session, while a process's own only orders it
 * among its session's processes. Waits (briefly) for the process to lead its own session first.
 */
export async function lowerNewSessionGroup(pid: number, nice: number, files: AutogroupFiles = PROC_AUTOGROUP): Promise<void> {
  if (nice === 0) return;
  const deadline = performance.now() + SESSION_WAIT_MS;
  while (setSessionGroupNice(pid, nice, files) === "shares-runner-group" && performance.now() < deadline) {
    await delay(SESSION_POLL_MS);
  }
}
