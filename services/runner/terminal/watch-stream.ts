import { RunnerError } from "../runner-error.js";
import { recordBytes, type ChangeJournal, type JournalEntry } from "./change-journal.js";
import { changedWithin } from "./changed-within.js";
import { labelsMatch } from "./labels.js";
import type { TerminalSnapshot } from "./terminal.js";

/** A message of a Watch stream, in the runner's terms. */
export type WatchEvent =
  | { kind: "listed"; sequence: number; terminals: TerminalSnapshot[] }
  | { kind: "synced"; sequence: number; epoch: string; restarted: boolean; resumed: boolean }
  | { kind: "changed"; entry: JournalEntry }
  | { kind: "heartbeat"; sequence: number };

/** Where the terminals come from: what a watch lists first. */
export interface WatchedTerminals {
  list(selector: Record<string, string>): Array<{ snapshot(): TerminalSnapshot }>;
}

/** Which terminals to watch, where to resume, how often to prove the stream alive. */
export interface WatchOptions {
  selector: Record<string, string>;
  /** The epoch and last sequence of a stream that broke; undefined starts with the full list. */
  resume?: { epoch: string; afterSequence: number };
  heartbeatMs: number;
  signal: AbortSignal;
}

/** Bytes of records in one `listed` message at most, well under the runner's largest response (16 MiB); a terminal larger than this goes alone. */
const LIST_CHUNK_BYTES = 1024 * 1024;

/**
 * One watcher's view of the terminals' records: the full list (or, on an accepted resume, nothing),
 * `synced`, then every change from the journal in sequence order, read from the watcher's own
 * position. A watcher that falls more than the journal's lag limit behind the changes made since it
 * started (a resume's own backlog does not count), or whose position the journal dropped, is ended
 * with RESOURCE_EXHAUSTED, to resume with the last sequence it saw.
 */
export async function* watchEvents(journal: ChangeJournal, terminals: WatchedTerminals, options: WatchOptions): AsyncGenerator<WatchEvent> {
  const { resume, selector } = options;
  let cursor = journal.sequence;
  // What a resuming watcher asked for is its own backlog; the lag limit counts only what came after.
  const backlogEnd = journal.sequence;
  if (resume && resume.epoch === journal.epoch && journal.since(resume.afterSequence)) {
    cursor = resume.afterSequence;
    yield { kind: "synced", sequence: cursor, epoch: journal.epoch, restarted: false, resumed: true };
  } else {
    // Listed in the same turn as `cursor` was read: the list is exactly the records as of that sequence.
    const listed = terminals.list(selector).map((terminal) => terminal.snapshot());
    for (const chunk of chunksOf(listed)) yield { kind: "listed", sequence: cursor, terminals: chunk };
    yield { kind: "synced", sequence: cursor, epoch: journal.epoch, restarted: resume !== undefined, resumed: false };
  }
  for (;;) {
    options.signal.throwIfAborted();
    const changed = journal.nextChange();
    const pending = journal.since(cursor);
    if (!pending) throw fellBehind(cursor, journal);
    for (const entry of pending) {
      if (entry.sequence > backlogEnd && journal.sequence - entry.sequence > journal.limits.maxLagChanges) throw fellBehind(cursor, journal);
      cursor = entry.sequence;
      if (concerns(entry, selector)) yield { kind: "changed", entry };
    }
    if (pending.length > 0) continue;
    if (!(await changedWithin(changed, options.heartbeatMs, options.signal))) yield { kind: "heartbeat", sequence: cursor };
  }
}

/** A change a watcher with this selector sees: the terminal matches after it, or matched before it. */
function concerns({ terminal, previousLabels }: JournalEntry, selector: Record<string, string>): boolean {
  return labelsMatch(terminal.labels, selector) || (previousLabels !== undefined && labelsMatch(previousLabels, selector));
}

function fellBehind(cursor: number, journal: ChangeJournal): RunnerError {
  return new RunnerError(
    "resource_exhausted",
    `this watcher fell behind (it read up to sequence ${cursor}, the runner is at ${journal.sequence}; at most ${journal.limits.maxLagChanges} changes may wait): watch again, resuming after sequence ${cursor}`,
  );
}

function* chunksOf(terminals: TerminalSnapshot[]): Generator<TerminalSnapshot[]> {
  let chunk: TerminalSnapshot[] = [];
  let bytes = 0;
  for (const terminal of terminals) {
    const size = recordBytes(terminal);
    if (chunk.length > 0 && bytes + size > LIST_CHUNK_BYTES) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(terminal);
    bytes += size;
  }
  // An empty runner still sends its (empty) list: a `listed` always precedes a fresh `synced`.
  if (chunk.length > 0 || terminals.length === 0) yield chunk;
}
