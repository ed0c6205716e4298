import type { ReadEvent } from "../log/output-log.js";
import { RunnerError } from "../runner-error.js";
import type { Terminal } from "./terminal.js";
import { ChangeWaiter } from "./changed-within.js";

/** An event on an Attach stream: a log event, or the stream's own `gap` and `heartbeat`. */
export type AttachEvent =
  | ReadEvent
  | { offset: number; event: { kind: "gap"; from: number; to: number } }
  | { offset: number; event: { kind: "heartbeat" } };

/** Where to start (and stop), whether to stay for live events, whether to leave shell marks out of the output, and how often to prove the stream is alive. */
export interface AttachOptions {
  fromOffset: number;
  /** The stream ends once the output before this offset was sent; undefined: no such end. */
  untilOffset?: number;
  follow: boolean;
  stripShellMarks: boolean;
  /** Infinity: none. */
  heartbeatMs: number;
  signal: AbortSignal;
}

/** Output arriving within this long of the previous output counts as a flood. */
const FLOOD_GAP_MS = 2;
/** A read this large is the kernel's whole buffer: the program writes faster than it is read. */
const FLOOD_READ_BYTES = 1024;
/** How long flood output is gathered before it is sent. */
const FLOOD_BATCH_MS = 1;
/** Output bytes merged into one event at most, so a reader far behind catches up in big steps. */
const MAX_EVENT_BYTES = 64 * 1024;

/**
 * One subscriber's view of a terminal: it reads the log from its own cursor, and tells the
 * terminal's flow control how far it got, so output is read at the pace of the fastest reader; a
 * reader that stalls holds nobody up and gets a gap when retention overtakes it. With
 * `stripShellMarks` its output leaves the shell marks out (their events still come where they ended)
 * and waits at a sequence that may still become one. Ends after `exited`, after the replay when not
 * following, once the output reached `untilOffset` (cut exactly there), or when the terminal is released.
 */
export async function* attachEvents(terminal: Terminal, options: AttachOptions): AsyncGenerator<AttachEvent> {
  const { log } = terminal;
  const until = options.untilOffset ?? Number.POSITIVE_INFINITY;
  if (until < options.fromOffset) throw new RunnerError("invalid_argument", `until_offset ${until} is before from_offset ${options.fromOffset}`);
  let cursor = log.cursorAt(options.fromOffset);
  const reader = terminal.openReader(cursor.offset);
  const waiter = new ChangeWaiter(options.signal);
  let lastWake = 0;
  try {
    for (;;) {
      options.signal.throwIfAborted();
      if (terminal.isReleased) return;
      // Coming back for more means everything yielded so far was taken.
      reader.progress(cursor.offset);
      if (cursor.offset >= until) return;
      const changed = log.nextChange();
      const read = log.read(cursor, Math.min(MAX_EVENT_BYTES, until - cursor.offset), options.stripShellMarks, until);
      cursor = read.cursor;
      if (read.gap) yield { offset: read.gap.from, event: { kind: "gap", ...read.gap } };
      for (const stamped of read.events) {
        yield stamped;
        if (stamped.event.kind === "exited") return;
      }
      if (read.gap || read.events.length > 0) continue;
      if (log.isFinished) {
        // Retention dropped the exit record itself; the terminal still knows how it ended.
        const exit = terminal.snapshot().exit!;
        yield { offset: log.endOffset, event: { kind: "exited", ...exit } };
        return;
      }
      if (!options.follow) return;
      if (!(await waiter.wait(changed, options.heartbeatMs))) {
        // Stamped where this reader is: a reader holding back an unfinished mark has not covered the log's end.
        yield { offset: cursor.offset, event: { kind: "heartbeat" } };
        continue;
      }
      // A full read that follows output closely is a flood: let a few more reads land and send them
      // as one message. A keystroke's echo (a few bytes) goes out at once.
      const now = performance.now();
      if (now - lastWake < FLOOD_GAP_MS && log.endOffset - cursor.offset >= FLOOD_READ_BYTES) await gatherFlood(log, cursor.offset, now + FLOOD_BATCH_MS, waiter);
      lastWake = now;
    }
  } finally {
    waiter.close();
    reader.close();
  }
}

/**
 * Waits until the log holds MAX_EVENT_BYTES past `offset`, has finished, or `deadline` (a
 * `performance.now()` time) has passed, sleeping between the log's changes rather than turning the
 * event loop. A timer may fire early (it counts from the loop's cached time), so the time left is
 * measured again after each wake-up.
 */
async function gatherFlood(log: Terminal["log"], offset: number, deadline: number, waiter: ChangeWaiter): Promise<void> {
  for (;;) {
    if (log.isFinished || log.endOffset - offset >= MAX_EVENT_BYTES) return;
    const left = deadline - performance.now();
    if (left <= 0) return;
    await waiter.wait(log.nextChange(), left);
  }
}
