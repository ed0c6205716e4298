import type { Logger } from "../../../lib/logger.js";
import { HangupSentinel } from "./hangup-sentinel.js";
import { closeInheritedDescriptors } from "./inheritable-descriptors.js";
import { lowerNewSessionGroup, withNiceness } from "./niceness.js";
import { spawnPipes } from "./pipes.js";
import { ptyAvailable, spawnPty } from "./pty.js";
import { asAccount } from "./setpriv.js";
import type { ProcessLauncher } from "./terminal-process.js";

/** The real launcher, which also holds the hangup sentinel of pipe terminals. */
export interface OwnedProcessLauncher extends ProcessLauncher {
  /** Ends the sentinel (call once every terminal is closed). */
  close(): void;
}

let inheritedClosed = false;

/**
 * The launcher that starts real processes: node-pty for ptys, child_process for pipes, each
 * `nice` below the runner's CPU priority (`--process-nice`, niceness.ts; 0: at the runner's). Before
 * the first one, descriptors this process inherited without close-on-exec are closed (child_process would pass them
 * on to every pipe terminal; pty terminals drop them by themselves).
 */
export function createProcessLauncher(log: Logger, nice: number): OwnedProcessLauncher {
  if (!inheritedClosed) {
    inheritedClosed = true;
    const closed = closeInheritedDescriptors();
    if (closed.length > 0) log.warn({ descriptors: closed }, "closed descriptors the runner inherited without close-on-exec, so no terminal inherits them");
  }
  const sentinel = new HangupSentinel(log);
  return {
    ptyAvailable: ptyAvailable(),
    launch: (spec, handlers, isPty) => {
      const started = asAccount(withNiceness(spec, nice));
      const child = isPty ? spawnPty(started, handlers) : spawnPipes(started, handlers, sentinel);
      void lowerNewSessionGroup(child.pid, nice);
      return child;
    },
    close: () => sentinel.close(),
  };
}
