import { spawnPipes } from "./pipes.js";
import { ptyAvailable, spawnPty } from "./pty.js";
import type { ProcessLauncher } from "./terminal.js";

/** The launcher that starts real processes: node-pty for ptys, child_process for pipes. */
export function createProcessLauncher(): ProcessLauncher {
  return {
    ptyAvailable: ptyAvailable(),
    launch: (spec, handlers, isPty) => (isPty ? spawnPty(spec, handlers) : spawnPipes(spec, handlers)),
  };
}
