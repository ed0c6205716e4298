import { writeSync } from "node:fs";

/** node-pty's queued writer for the master, which its typings hide. */
export interface QueuedWriter {
  _writeQueue?: unknown[];
}

/** What the fast path needs of a node-pty terminal: its master descriptor, whether that is still open, its queued writer and its own write. */
export interface PtyMaster {
  fd: number;
  /** False once node-pty has closed the master: the descriptor's number may already belong to another file. */
  isOpen(): boolean;
  queued: QueuedWriter;
  write(data: Buffer): void;
}

/**
 * Writes input to a pty master at once when nothing is queued before it: node-pty's own write
 * goes through the thread pool (a wake-up of a worker and another of the event loop for every
 * keystroke, the larger part of a keystroke's cost in the runner). The master is non-blocking
 * (node-pty sets it so, or fails the spawn), so a full input buffer only writes part or nothing:
 * the rest, and every write after it while node-pty's queue is not empty, goes to node-pty's queue,
 * which waits for room. Order is kept either way. Once node-pty has closed the master, every write
 * goes to node-pty, which drops it, so a reused descriptor number is never written to.
 */
export function createPtyInput(master: PtyMaster, writeNow: (fd: number, data: Buffer) => number = writeSync): (data: Buffer) => void {
  return (data) => {
    if (!master.isOpen() || (master.queued._writeQueue?.length ?? 1) > 0) return master.write(data);
    let written = 0;
    try {
      written = writeNow(master.fd, data);
    } catch {
      // EAGAIN (no room yet) or an error node-pty's writer reports itself: either way, its queue takes it.
    }
    if (written < data.length) master.write(written === 0 ? data : data.subarray(written));
  };
}
