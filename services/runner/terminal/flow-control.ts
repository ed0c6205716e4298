/** Bytes the fastest reader may be behind the end of the log before the process's output stops being read. */
export const READ_CREDIT_BYTES = 128 * 1024;
/**
 * Room kept free in the log while nobody reads: reads already under way when output is paused (a
 * 64 KiB read on each of stdout and stderr, one more in flight) land without evicting anything, so
 * a reader that attaches late still gets the output from its first byte.
 */
export const UNREAD_HEADROOM_BYTES = 256 * 1024;
/** A reader that has not asked for more for this long, while behind, counts as stalled and no longer holds anything up. */
export const STALLED_READER_MS = 2_000;

/** One Attach stream's position, as flow control sees it. */
export interface Reader {
  /** Records that the reader has taken everything before `offset`. */
  progress(offset: number): void;
  /** The reader is gone. */
  close(): void;
}

/** What the decision needs to know about the log. */
export interface LogLevel {
  endOffset: number;
  retainedBytes: number;
  retainLimit: number;
}

interface ReaderState {
  offset: number;
  lastPull: number;
}

/**
 * Decides when a terminal's output is read. With readers that keep up, it is read while the fastest
 * of them is less than READ_CREDIT_BYTES behind, so a flood never runs ahead of what anyone consumes
 * and ^C stays responsive; a stalled reader is ignored (it falls behind and gets a gap). With nobody
 * reading it is read while the log has room to spare, so `yes` does not spin for nobody and the
 * first output is still there when somebody attaches. `onChange` is told whenever the answer may
 * have changed.
 */
export class FlowControl {
  private readonly readers = new Set<ReaderState>();
  private recheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly level: () => LogLevel,
    private readonly onChange: () => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Registers a new reader at `offset`. */
  open(offset: number): Reader {
    const state: ReaderState = { offset, lastPull: this.now() };
    this.readers.add(state);
    this.onChange();
    return {
      progress: (next) => {
        state.offset = next;
        state.lastPull = this.now();
        this.onChange();
      },
      close: () => {
        this.readers.delete(state);
        this.onChange();
      },
    };
  }

  /** How many readers are open. */
  get readerCount(): number {
    return this.readers.size;
  }

  /** True when the process's output should be read now. */
  shouldRead(): boolean {
    const { endOffset, retainedBytes, retainLimit } = this.level();
    const now = this.now();
    let fastest = -1;
    let stalled = false;
    for (const reader of this.readers) {
      const behind = reader.offset < endOffset;
      if (behind && now - reader.lastPull >= STALLED_READER_MS) stalled = true;
      else fastest = Math.max(fastest, reader.offset);
    }
    if (fastest >= 0) {
      const read = endOffset - fastest < READ_CREDIT_BYTES;
      // Paused for a reader that may yet stall: look again once it would count as stalled.
      if (!read) this.scheduleRecheck();
      return read;
    }
    if (stalled) return true;
    return retainLimit - retainedBytes > Math.min(UNREAD_HEADROOM_BYTES, retainLimit / 2);
  }

  /** Stops the pending re-check (the terminal is gone). */
  dispose(): void {
    clearTimeout(this.recheck);
  }

  private scheduleRecheck(): void {
    if (this.recheck) return;
    this.recheck = setTimeout(() => {
      this.recheck = undefined;
      this.onChange();
    }, STALLED_READER_MS);
    this.recheck.unref();
  }
}
