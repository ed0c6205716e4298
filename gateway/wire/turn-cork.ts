import type { Writable } from "node:stream";

/**
 * A function to call before each write to `socket`: the first call of an event-loop turn corks the
 * socket and uncorks it once the turn's callbacks have run, so the frames of one turn (several
 * terminals' output from one runner batch, to one client) leave in one system call instead of one
 * each. Nothing waits past the turn: a lone keystroke's echo goes out as soon as it did before.
 */
export function corkForTurn(socket: Writable): () => void {
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket.uncork();
  };
  return () => {
    if (corked) return;
    corked = true;
    socket.cork();
    setImmediate(uncork);
  };
}
