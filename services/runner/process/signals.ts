import { constants } from "node:os";
import { RunnerError } from "../runner-error.js";

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = constants.signals;

/** The canonical name ("SIGINT") of a signal given as "SIGINT", "sigint" or "INT"; INVALID_ARGUMENT otherwise. */
export function parseSignalName(name: string): NodeJS.Signals {
  const upper = name.trim().toUpperCase();
  const canonical = upper.startsWith("SIG") ? upper : `SIG${upper}`;
  if (!(canonical in SIGNAL_NUMBERS)) throw new RunnerError("invalid_argument", `unknown signal "${name}"`);
  return canonical as NodeJS.Signals;
}

/** The name of a signal number ("SIGKILL" for 9), or `SIG<n>` for one this platform does not name. */
export function signalNameOf(signal: number): string {
  for (const [name, num] of Object.entries(SIGNAL_NUMBERS)) if (num === signal) return name;
  return `SIG${signal}`;
}

/**
 * Sends a signal to a whole process group. Refuses group ids 0 and 1, which would mean "the
 * runner's own group" and "every process", so a terminal that never started cannot hit either.
 * Returns false when the group no longer exists.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false;
  return sendSignal(-pgid, signal);
}

/** Sends a signal to one process; false when it no longer exists. */
export function signalProcess(pid: number, signal: NodeJS.Signals | 0): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  return sendSignal(pid, signal);
}

/** True while any process (zombies included) is left in the group. */
export function groupIsAlive(pgid: number): boolean {
  return signalGroup(pgid, 0);
}

function sendSignal(target: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}
