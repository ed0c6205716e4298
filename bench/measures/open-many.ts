import type { Program, Terminal, TerminalSystem } from "../systems/terminal-system.js";

/** Terminals opened at once: enough to open a hundred ssh connections in seconds, few enough not to time out a peer's handshakes on two cores. */
const OPEN_CONCURRENCY = 8;

/** `count` terminals of `system` running `program`; if one fails, the ones opened are closed and the error is thrown. */
export async function openMany(system: TerminalSystem, program: Program, count: number): Promise<Terminal[]> {
  const terminals: Terminal[] = [];
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < count && !failed) {
      next++;
      terminals.push(await system.open(program).catch((error) => ((failed = true), Promise.reject(error))));
    }
  };
  const outcomes = await Promise.allSettled(Array.from({ length: Math.min(OPEN_CONCURRENCY, count) }, worker));
  const failure = outcomes.find((outcome) => outcome.status === "rejected");
  if (failure) {
    await Promise.all(terminals.map((terminal) => terminal.close()));
    throw failure.reason;
  }
  return terminals;
}
