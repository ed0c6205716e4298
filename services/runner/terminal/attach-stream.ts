import type { LogCursor, ReadEvent } from "../log/output-log.js";
import { RunnerError } from "../runner-error.js";
import type { Reader } from "./flow-control.js";
import type { Terminal } from "./terminal.js";
import { ChangeWaiter } from "./changed-within.js";

/** An event on an Attach stream: a log event, or the stream's own `gap` and `heartbeat`. */
export type AttachEvent =
  | ReadEvent
  | { offset: number; event: { kind: "gap"; from: number; to: number } }
  | { offset: number; event: { kind: "heartbeat" } };

/** Where to start (and stop), whether to stay for live events, and whether to leave shell marks out of the output. */
export interface AttachReadOptions {
  fromOffset: number;
  /** The stream ends once the output before this offset was sent; undefined: no such end. */
  untilOffset?: number;
  follow: boolean;
  stripShellMarks: boolean;
}

/** An Attach stream's options: where and how it reads, how often it proves it is alive, and what ends it. */
export interface AttachOptions extends AttachReadOptions {
  /** Infinity: none. */
  heartbeatMs: number;
  signal: AbortSignal;
}

/** What one step of a reader gives: the events it read, then whether to step again, wait for the log's next change, or stop. */
export interface AttachStep {
  events: AttachEvent[];
  next: "more" | "wait" | "done";
  /** Settles at the log's first change after this step's read: what a "wait" waits on. */
  changed: Promise<void>;
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
 * and waits at a sequence that may still become one. It is done after `exited`, after the replay when
 * not following, once the output reached `untilOffset` (cut exactly there), or when the terminal is
 * released. Its steps are synchronous, so a caller that forwards events as they come (a follow) needs
 * no promise per event; `attachEvents` is the same reader as a stream.
 */
export class AttachReader {
  private cursor: LogCursor;
  private readonly reader: Reader;
  private readonly until: number;
  private lastWake = 0;

  constructor(
    private readonly terminal: Terminal,
    private readonly options: AttachReadOptions,
  ) {
    this.until = options.untilOffset ?? Number.POSITIVE_INFINITY;
    if (this.until < options.fromOffset) throw new RunnerError("invalid_argument", `until_offset ${this.until} is before from_offset ${options.fromOffset}`);
    this.cursor = terminal.log.cursorAt(options.fromOffset);
    this.reader = terminal.openReader(this.cursor.offset);
  }

  /** The offset the reader has reached. */
  get offset(): number {
    return this.cursor.offset;
  }

  /** Reads what there is from where the last step ended; asking again means everything returned so far was taken. */
  step(): AttachStep {
    const { terminal, until } = this;
    const { log } = terminal;
    const changed = log.nextChange();
    if (terminal.isReleased) return { events: [], next: "done", changed };
    this.reader.progress(this.cursor.offset);
    if (this.cursor.offset >= until) return { events: [], next: "done", changed };
    const read = log.read(this.cursor, Math.min(MAX_EVENT_BYTES, until - this.cursor.offset), this.options.stripShellMarks, until);
    this.cursor = read.cursor;
    const events: AttachEvent[] = [];
    if (read.gap) events.push({ offset: read.gap.from, event: { kind: "gap", ...read.gap } });
    for (const stamped of read.events) {
      events.push(stamped);
      if (stamped.event.kind === "exited") return { events, next: "done", changed };
    }
    if (events.length > 0) return { events, next: "more", changed };
    if (log.isFinished) {
      // Retention dropped the exit record itself; the terminal still knows how it ended.
      events.push({ offset: log.endOffset, event: { kind: "exited", ...terminal.snapshot().exit! } });
      return { events, next: "done", changed };
    }
    return { events, next: this.options.follow ? "wait" : "done", changed };
  }

  /**
   * Called once a wait ended with a change: a read that follows output closely is a flood, so a few
   * more reads are let land first and go as one event (undefined: read at once; a keystroke's echo,
   * a few bytes, goes out at once). The promise settles when the log holds a full event past the
   * reader, is finished, or FLOOD_BATCH_MS passed; `waiter` sleeps between the log's changes rather
   * than turning the event loop.
   */
  gatherAfterWake(waiter: ChangeWaiter): Promise<void> | undefined {
    const now = performance.now();
    const flood = now - this.lastWake < FLOOD_GAP_MS && this.terminal.log.endOffset - this.cursor.offset >= FLOOD_READ_BYTES;
    this.lastWake = now;
    return flood ? this.gatherFlood(now + FLOOD_BATCH_MS, waiter) : undefined;
  }

  /** Closes the reader: flow control no longer waits for it. */
  close(): void {
    this.reader.close();
  }

  /** A timer may fire early (it counts from the loop's cached time), so the time left is measured again after each wake-up. */
  private async gatherFlood(deadline: number, waiter: ChangeWaiter): Promise<void> {
    const { log } = this.terminal;
    for (;;) {
      if (log.isFinished || log.endOffset - this.cursor.offset >= MAX_EVENT_BYTES) return;
      const left = deadline - performance.now();
      if (left <= 0) return;
      await waiter.wait(log.nextChange(), left);
    }
  }
}

/** An AttachReader as a stream of events, with a heartbeat after `heartbeatMs` without any; ends when `signal` aborts. */
export async function* attachEvents(terminal: Terminal, options: AttachOptions): AsyncGenerator<AttachEvent> {
  const reader = new AttachReader(terminal, options);
  const waiter = new ChangeWaiter(options.signal);
  try {
    for (;;) {
      options.signal.throwIfAborted();
      const step = reader.step();
      for (const event of step.events) yield event;
      if (step.next === "done") return;
      if (step.next === "more") continue;
      if (!(await waiter.wait(step.changed, options.heartbeatMs))) {
        // Stamped where this reader is: a reader holding back an unfinished mark has not covered the log's end.
        yield { offset: reader.offset, event: { kind: "heartbeat" } };
        continue;
      }
      const gathering = reader.gatherAfterWake(waiter);
      if (gathering) await gathering;
    }
  } finally {
    waiter.close();
    reader.close();
  }
}
