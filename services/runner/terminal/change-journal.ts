import { randomUUID } from "node:crypto";
import { ChangeSignal } from "../../../lib/change-signal.js";
import type { RecordChange, TerminalSnapshot } from "./terminal.js";

/** One change to one terminal's record, with its runner-wide sequence. */
export interface JournalEntry {
  sequence: number;
  change: RecordChange;
  /** The record after the change. */
  terminal: TerminalSnapshot;
  /** For a labels change: the labels before it (a watcher with a selector sees a terminal leave it). */
  previousLabels?: Record<string, string>;
}

/** How much of the past the journal keeps, and how far a watcher may lag behind its newest change. */
export interface WatchLimits {
  journalChanges: number;
  journalBytes: number;
  maxLagChanges: number;
}

/** Changes kept for watchers that resume: a burst of a few thousand (hundreds of terminals spawned, titled and closed) still lets a gateway that reconnects within seconds catch up without a full list. */
export const WATCH_JOURNAL_CHANGES = 4096;
/** Bytes of records kept at most: labels may hold up to about 1 MiB per terminal, so the count alone would not bound memory. */
export const WATCH_JOURNAL_BYTES = 16 * 1024 * 1024;
/** A watcher further behind than this is ended (RESOURCE_EXHAUSTED): a quarter of the journal, so that it can still resume from it. */
export const WATCH_MAX_LAG_CHANGES = 1024;
/** Counted for each record beside its strings: the snapshot's numbers, dates and object headers. */
const ENTRY_OVERHEAD_BYTES = 256;

/** The limits a runner runs with unless told otherwise. */
export const DEFAULT_WATCH_LIMITS: WatchLimits = {
  journalChanges: WATCH_JOURNAL_CHANGES,
  journalBytes: WATCH_JOURNAL_BYTES,
  maxLagChanges: WATCH_MAX_LAG_CHANGES,
};

/**
 * The runner-wide, bounded record of recent changes to terminals' records: each change gets the next
 * sequence; the oldest are dropped past the limits. Watchers read it from their own position, so a
 * change costs one entry however many watch, and a slow watcher holds nothing but its position.
 */
export class ChangeJournal {
  /** New for every runner instance: sequences of another instance mean nothing here. */
  readonly epoch = randomUUID();
  private entries: JournalEntry[] = [];
  private first = 0;
  private bytes = 0;
  private last = 0;
  private readonly changed = new ChangeSignal();

  constructor(readonly limits: WatchLimits = DEFAULT_WATCH_LIMITS) {}

  /** The sequence of the newest change (0 before the first). */
  get sequence(): number {
    return this.last;
  }

  /** Records a change under the next sequence and wakes every watcher. */
  append(change: RecordChange, terminal: TerminalSnapshot, previousLabels?: Record<string, string>): void {
    const entry: JournalEntry = { sequence: ++this.last, change, terminal, previousLabels };
    this.entries.push(entry);
    this.bytes += entryBytes(entry);
    while (this.entries.length - this.first > this.limits.journalChanges || (this.bytes > this.limits.journalBytes && this.entries.length - this.first > 1)) {
      this.bytes -= entryBytes(this.entries[this.first]!);
      this.entries[this.first++] = undefined!;
    }
    if (this.first > 1024 && this.first * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.first);
      this.first = 0;
    }
    this.changed.fire();
  }

  /** The changes after `sequence`, oldest first; undefined when some of them were dropped already or `sequence` is in the future. */
  since(sequence: number): JournalEntry[] | undefined {
    if (!Number.isSafeInteger(sequence) || sequence < 0 || sequence > this.last) return undefined;
    const oldest = this.last - (this.entries.length - this.first) + 1;
    if (sequence < oldest - 1) return undefined;
    return this.entries.slice(this.first + (sequence - oldest + 1));
  }

  /** Resolves at the next change. */
  nextChange(): Promise<void> {
    return this.changed.next();
  }
}

function entryBytes({ terminal, previousLabels }: JournalEntry): number {
  return recordBytes(terminal) + (previousLabels ? labelBytes(previousLabels) : 0);
}

/** About how many bytes a record takes: its strings, and a fixed amount for the rest. */
export function recordBytes(terminal: TerminalSnapshot): number {
  let bytes = ENTRY_OVERHEAD_BYTES + terminal.title.length + terminal.cwd.length + terminal.runAs.length + labelBytes(terminal.labels);
  for (const word of terminal.argv) bytes += word.length;
  return bytes;
}

function labelBytes(labels: Record<string, string>): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(labels)) bytes += key.length + value.length;
  return bytes;
}
