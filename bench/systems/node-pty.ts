import { spawnRaw } from "../raw-pty.js";
import { BASH_INTEGRATION, shellEnv } from "../support.js";
import { OutputRelay } from "./output-relay.js";
import type { Program, TerminalSystem } from "./terminal-system.js";

/** The programs as node-pty and the bare shapes start them: bash with the runner's integration script, as the runner starts it. */
export const PROGRAMS: Record<Program, { file: string; args: string[] }> = {
  bash: { file: "/bin/bash", args: ["--rcfile", BASH_INTEGRATION] },
  sh: { file: "/bin/sh", args: [] },
  yes: { file: "yes", args: [] },
};

/** node-pty in the bench's own process: the lower bound every other system is measured against; the bench's process is its "reader". */
export async function nodePtyInProcess(): Promise<TerminalSystem> {
  return {
    processes: () => ({ reader: [process.pid] }),
    open: async (program) => {
      const { file, args } = PROGRAMS[program];
      const terminal = spawnRaw(file, args, shellEnv("/bin/bash"));
      const relay = new OutputRelay();
      terminal.onData((text) => relay.push(text));
      return { send: (text) => terminal.write(text), output: relay.output, firstOutput: relay.firstOutput, close: async () => terminal.kill() };
    },
    stop: async () => {},
  };
}
