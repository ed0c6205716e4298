import { cpuSecondsOf } from "../support.js";
import type { TerminalSystem } from "./terminal-system.js";

type Snapshot = Map<string, Map<number, number>>;

function snapshot(roles: Record<string, number[]>): Snapshot {
  const taken: Snapshot = new Map();
  for (const [role, pids] of Object.entries(roles)) {
    const seconds = new Map<number, number>();
    for (const pid of pids) {
      try {
        seconds.set(pid, cpuSecondsOf(pid));
      } catch {
        // ended between listing and reading
      }
    }
    taken.set(role, seconds);
  }
  return taken;
}

function spentSince(before: Snapshot, after: Snapshot): Record<string, number> {
  const cpuMs: Record<string, number> = {};
  for (const [role, seconds] of after) {
    let total = 0;
    for (const [pid, now] of seconds) total += now - (before.get(role)?.get(pid) ?? 0);
    cpuMs[role] = Math.round(total * 1000 * 10) / 10;
  }
  return cpuMs;
}

/** CPU ms by role while some work ran: the system's serving processes, and its clients apart (the bench's own process among them unless it serves). */
export interface RoleCpu {
  server: Record<string, number>;
  clients: Record<string, number>;
}

function clientsOf(system: TerminalSystem): Record<string, number[]> {
  const serving = Object.values(system.processes()).flat();
  return { ...system.clients?.(), ...(serving.includes(process.pid) ? {} : { benchProcess: [process.pid] }) };
}

/**
 * The CPU each role of `system` used while `work` ran, summed over the role's processes: one that
 * started meanwhile counts from its start, one that ended meanwhile is not seen (so measurements
 * keep their terminals open until they have read the CPU).
 */
export async function cpuOfRolesDuring<T>(system: TerminalSystem, work: () => Promise<T>): Promise<{ result: T; cpu: RoleCpu }> {
  const before = { server: snapshot(system.processes()), clients: snapshot(clientsOf(system)) };
  const result = await work();
  const after = { server: snapshot(system.processes()), clients: snapshot(clientsOf(system)) };
  return { result, cpu: { server: spentSince(before.server, after.server), clients: spentSince(before.clients, after.clients) } };
}
