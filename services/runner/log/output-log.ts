import { RunnerError } from "../runner-error.js";
import type { BudgetedLog, RetentionBudget } from "./retention-budget.js";
import { ChangeSignal } from "../../../lib/change-signal.js";

/** Something that happened in a terminal, in the order it happened relative to its output bytes. */
export type LogEvent =
  | { kind: "output"; data: Buffer }
  | { kind: "resized"; cols: number; rows: number }
  | { kind: "title_changed"; title: string }
  | { kind: "cleared" }
  | { kind: "command_detection_available" }
  | { kind: "command_executed"; commandId: string; commandLine: string; timestampMs: number }
  | { kind: "command_finished"; commandId: string; exitCode?: number; durationMs: number }
  | { kind: "cwd_changed"; cwd: string }
  | { kind: "exited"; exitCode: number; signal: string };

/** An event stamped with the output offset where it happened (for output: the offset of its first byte). */
export interface StampedEvent {
  offset: number;
  event: LogEvent;
}

/** What a run of output bytes is to a reader that leaves shell marks out: text, a shell mark, or an unfinished sequence that may still become one. */
export type OutputKind = "text" | "mark" | "unsettled";

/**
 * Output as a read returns it: its bytes, as the buffers the log holds them in (in order; a read
 * merges consecutive appends without copying them), and the offset just past the last byte of the
 * log they cover (left-out marks included).
 */
export interface OutputRead {
  kind: "output";
  parts: readonly Buffer[];
  end: number;
}

/** An output read's bytes in one buffer: its only part as it is, or its parts copied together. */
export function outputBytes({ parts }: OutputRead): Buffer {
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** How many bytes an output read carries. */
export function outputLength({ parts }: OutputRead): number {
  let bytes = 0;
  for (const part of parts) bytes += part.length;
  return bytes;
}

/** An event as a read returns it. */
export interface ReadEvent {
  offset: number;
  event: Exclude<LogEvent, { kind: "output" }> | OutputRead;
}

/** A reader's position: the next entry it has not read and the next byte offset. */
export interface LogCursor {
  seq: number;
  offset: number;
}

/** What one read returns: a gap when the reader fell behind retention, then events in order. */
export interface LogRead {
  gap?: { from: number; to: number };
  events: ReadEvent[];
  cursor: LogCursor;
}

/** Where a log reports the bytes it takes in and the bytes retention pushes out (for metrics). */
export interface LogCounters {
  output(bytes: number): void;
  evicted(bytes: number): void;
}

interface Entry extends StampedEvent {
  seq: number;
  /** For output: what its bytes are to readers that leave shell marks out. */
  kind: OutputKind;
}

/** What a non-output event costs in the retention budget, so a resize storm cannot grow the log without bound. */
const EVENT_COST_BYTES = 64;
/** Dead slots at the front of the entry array tolerated before it is compacted. */
const COMPACT_AFTER_ENTRIES = 1024;
/**
 * What a dead slot holds: an evicted entry must not stay reachable until the array is compacted. At
 * 4 KiB a read, 1,024 dead slots held up to 4 MiB of evicted output per terminal, four times a full
 * log, and a runner of 500 busy terminals grew by 350 MiB of it in the 30 s after retention filled.
 */
const EVICTED: Entry = Object.freeze({ seq: -1, offset: -1, event: { kind: "cleared" as const }, kind: "text" as const });

/**
 * The offset-addressed record of one terminal: every output byte has a monotonically increasing
 * offset, other events are stamped with the offset where they happened. Retention is bounded in
 * bytes; what falls out is reported to late readers as a gap, never skipped silently.
 */
export class OutputLog implements BudgetedLog {
  private entries: Entry[] = [];
  private head = 0;
  private nextSeq = 0;
  private retained = 0;
  private start = 0;
  private end = 0;
  private finished = false;
  /** Output entries of a sequence that may still turn out to be a shell mark, oldest first. */
  private unsettled: Entry[] = [];
  private readonly changed = new ChangeSignal();

  constructor(
    private readonly retainBytes: number,
    private readonly budget?: RetentionBudget,
    private readonly counters?: LogCounters,
  ) {
    budget?.register(this);
  }

  /** Offset of the first retained output byte. */
  get startOffset(): number {
    return this.start;
  }

  /** Offset just past the last output byte. */
  get endOffset(): number {
    return this.end;
  }

  /** The most this log retains. */
  get retainLimit(): number {
    return this.retainBytes;
  }

  /** Bytes this log holds against its budgets. */
  get retainedBytes(): number {
    return this.retained;
  }

  /** True once the final event is in: nothing more will be appended. */
  get isFinished(): boolean {
    return this.finished;
  }

  /**
   * Appends output bytes and returns the offset of the first one. Unless `kind` is `unsettled`, it
   * first settles the unsettled output before it as `kind` (even when `data` is empty), all but its
   * last `keepUnsettled` bytes (whole appends), which belong to what comes next.
   */
  appendOutput(data: Buffer, kind: OutputKind = "text", keepUnsettled = 0): number {
    const offset = this.end;
    if (kind !== "unsettled" && this.unsettled.length > 0) this.settle(kind, keepUnsettled);
    if (data.length === 0) return offset;
    const entry = this.push({ kind: "output", data }, data.length, kind);
    if (entry && kind === "unsettled") this.unsettled.push(entry);
    this.end += data.length;
    this.counters?.output(data.length);
    return offset;
  }

  /** Records a non-output event at the current end offset. */
  record(event: Exclude<LogEvent, { kind: "output" }>): void {
    this.push(event, eventCost(event));
  }

  /** Drops every retained entry and records `cleared`, so late readers see a gap up to here; an exit record stays last. */
  clear(): void {
    const exit = this.finished ? this.entries.at(-1)?.event : undefined;
    this.budget?.release(this.retained);
    this.entries = [];
    this.head = 0;
    this.retained = 0;
    this.start = this.end;
    this.finished = false;
    this.unsettled = [];
    this.record({ kind: "cleared" });
    if (exit?.kind === "exited") this.finish(exit);
  }

  /** Records the final event (free of charge: it must outlive the output it ends); the log accepts nothing after it. */
  finish(event: Extract<LogEvent, { kind: "exited" }>): void {
    // A sequence the process never finished is let through as it is.
    this.settle("text");
    this.push(event, 0);
    this.finished = true;
  }

  /** Stops counting this log against the shared budget (the terminal was released). */
  dispose(): void {
    this.budget?.release(this.retained);
    this.budget?.unregister(this);
    this.entries = [];
    this.unsettled = [];
    this.head = 0;
    this.retained = 0;
    this.notify();
  }

  /** A cursor that reads events from `offset` on: an output entry containing it is read from that byte. */
  cursorAt(offset: number): LogCursor {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset > this.end) {
      throw new RunnerError("out_of_range", `offset ${offset} is past the end of the output (${this.end})`);
    }
    let low = this.head;
    let high = this.entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (entryEnd(this.entries[mid]!) <= offset && !isEventAt(this.entries[mid]!, offset)) low = mid + 1;
      else high = mid;
    }
    return { seq: low < this.entries.length ? this.entries[low]!.seq : this.nextSeq, offset };
  }

  /**
   * Reads from `cursor`: at most about `maxBytes` of output (consecutive output entries are merged),
   * and nothing at or past `untilOffset` (an entry crossing it is cut exactly there).
   * With `stripMarks`, shell marks are left out of the output (an event may then carry no bytes,
   * yet its `end` moves on) and the read stops before an unsettled sequence until it settles.
   */
  read(cursor: LogCursor, maxBytes: number, stripMarks = false, untilOffset = Number.POSITIVE_INFINITY): LogRead {
    const firstSeq = this.head < this.entries.length ? this.entries[this.head]!.seq : this.nextSeq;
    let { seq, offset } = cursor;
    let gap: LogRead["gap"];
    if (offset < this.start) {
      gap = { from: offset, to: this.start };
      offset = this.start;
    }
    if (seq < firstSeq) seq = firstSeq;
    const events: ReadEvent[] = [];
    let pending: Buffer[] = [];
    let runStart: number | undefined;
    let bytes = 0;
    const flush = (): void => {
      if (runStart === undefined) return;
      // The parts stay the log's own buffers: a copy of a merged read held by a slow reader's pending
      // batches doubled what the runner kept for the output (500 terminals, each read 256 KiB behind).
      events.push({ offset: runStart, event: { kind: "output", parts: pending, end: offset } });
      pending = [];
      runStart = undefined;
    };
    for (let i = this.head + (seq - firstSeq); i < this.entries.length && bytes < maxBytes && offset < untilOffset; i++) {
      const entry = this.entries[i]!;
      if (entry.event.kind !== "output") {
        flush();
        events.push({ offset: entry.offset, event: entry.event });
        seq = entry.seq + 1;
        continue;
      }
      if (stripMarks && entry.kind === "unsettled") break;
      const skip = Math.max(0, offset - entry.offset);
      // An entry crossing `untilOffset` is read up to it; the cursor stays on it, inside.
      const take = Math.min(entry.event.data.length, untilOffset - entry.offset);
      seq = take === entry.event.data.length ? entry.seq + 1 : entry.seq;
      const data = skip > 0 || take < entry.event.data.length ? entry.event.data.subarray(skip, take) : entry.event.data;
      runStart ??= entry.offset + skip;
      if (!stripMarks || entry.kind === "text") pending.push(data);
      bytes += data.length;
      offset = entry.offset + take;
    }
    flush();
    return { gap, events, cursor: { seq, offset } };
  }

  /** True when a reader at `cursor` has everything there is. */
  isCaughtUp(cursor: LogCursor): boolean {
    return cursor.seq >= this.nextSeq && cursor.offset >= this.start;
  }

  /** Resolves at the next append, record or eviction. */
  nextChange(): Promise<void> {
    return this.changed.next();
  }

  /** Evicts up to `bytes` from the front (oldest first); returns what was freed. Called by the shared budget. */
  evictOldest(bytes: number): number {
    let freed = 0;
    const startBefore = this.start;
    while (freed < bytes && this.head < this.entries.length) {
      const entry = this.entries[this.head]!;
      if (entry.event.kind !== "output") {
        if (entry.event.kind === "exited") break;
        freed += eventCost(entry.event);
        this.entries[this.head++] = EVICTED;
        continue;
      }
      const size = entry.event.data.length;
      const take = Math.min(size, bytes - freed);
      freed += take;
      this.start = entry.offset + take;
      if (take === size) {
        this.entries[this.head++] = EVICTED;
      } else {
        entry.event = { kind: "output", data: entry.event.data.subarray(take) };
        entry.offset += take;
      }
    }
    if (this.head >= COMPACT_AFTER_ENTRIES && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    this.retained -= freed;
    if (this.start > startBefore) this.counters?.evicted(this.start - startBefore);
    return freed;
  }

  private push(event: LogEvent, cost: number, kind: OutputKind = "text"): Entry | undefined {
    if (this.finished) return undefined;
    const entry: Entry = { seq: this.nextSeq++, offset: this.end, event, kind };
    this.entries.push(entry);
    this.retained += cost;
    if (this.retained > this.retainBytes) {
      const freed = this.evictOldest(this.retained - this.retainBytes);
      this.budget?.release(freed);
    }
    this.budget?.charge(this, cost);
    this.notify();
    return entry;
  }

  /** Gives the unsettled output but its last `keepBytes` its final kind; readers held before it may go on. */
  private settle(kind: "text" | "mark", keepBytes = 0): void {
    let kept = this.unsettled.length;
    for (let bytes = 0; bytes < keepBytes && kept > 0; ) bytes += entryLength(this.unsettled[--kept]!);
    if (kept === 0) return;
    for (const entry of this.unsettled.slice(0, kept)) entry.kind = kind;
    this.unsettled = this.unsettled.slice(kept);
    this.notify();
  }

  private notify(): void {
    this.changed.fire();
  }
}

/** What a non-output event counts against retention: its text as well as the base cost, so long titles or command lines cannot grow a log unbounded. */
function eventCost(event: Exclude<LogEvent, { kind: "output" }>): number {
  let text = 0;
  for (const value of Object.values(event)) if (typeof value === "string") text += value.length;
  return EVENT_COST_BYTES + text;
}

function entryLength(entry: Entry): number {
  return entry.event.kind === "output" ? entry.event.data.length : 0;
}

function entryEnd(entry: Entry): number {
  return entry.event.kind === "output" ? entry.offset + entry.event.data.length : entry.offset;
}

function isEventAt(entry: Entry, offset: number): boolean {
  return entry.event.kind !== "output" && entry.offset >= offset;
}
