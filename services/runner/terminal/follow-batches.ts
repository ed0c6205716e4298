import { ChangeSignal } from "../../../lib/change-signal.js";
import { ChangeWaiter, changedWithin, type Timer } from "./changed-within.js";

/**
 * How long after a batch was sent the next one waits, unless the stream was quiet or the batch is
 * small: 100 busy terminals then share a message (about 15 reads each; 4 at 2 ms, 1.3 when only one
 * event-loop turn is shared), and the runner and gateway spent a quarter less CPU per MB than at 2 ms.
 * Output waits at most this long, well under a screen's frame.
 */
export const FOLLOW_BATCH_INTERVAL_MS = 5;
/**
 * A batch smaller than this goes out on the next turn even within the interval: what is this small
 * is a keystroke's echo or a prompt, which typing fast would otherwise hold for the interval each time.
 */
export const FOLLOW_SMALL_BATCH_BYTES = 1024;
/**
 * A follow that added this much within one interval is flooding: its batches go on the next turn, as
 * an Attach stream's events would, until an interval after it last did (so the tail of a flood, and
 * the prompt after a ^C, are not held either). Its messages are large already, so pacing
 * saves nothing; held back, more would run ahead of a ^C (measured at 5 ms: 41 KB after ^C instead of
 * 16, and the prompt back 6 ms after it instead of 3). A terminal printing 4 KB every 0.1 s never gets near.
 */
export const FOLLOW_FLOOD_BYTES = 16 * 1024;
/**
 * A batch this large goes out at once: far above what busy terminals gather in an interval, far
 * below the runner's 16 MiB response limit (a batch is at most this plus one 64 KiB event).
 */
export const FOLLOW_BATCH_MAX_BYTES = 512 * 1024;
/**
 * Bytes of one follow in batches not yet taken before its pump waits: four Attach events, half a
 * full batch, so one terminal's flood cannot fill a batch alone, and a caller that reads nothing
 * holds at most this (and one event) per follow. At one event (64 KiB) a flood's reader waited for
 * every batch to be taken before reading on: in alternated runs of a 64 MiB `cat`, four events moved
 * 10 % more MB/s for 12 % less CPU per MB, with ^C and echo beside a flood unchanged.
 */
export const FOLLOW_MAX_PENDING_PER_FOLLOW = 256 * 1024;

/** The clock and timers pacing runs on; tests step them by hand. */
export interface BatchScheduler {
  now(): number;
  after: Timer;
  /** Runs `task` once this event-loop turn's I/O has been handled (setImmediate); returns what cancels it. */
  soon(task: () => void): () => void;
}

/** The event loop's clock and timers. */
export const EVENT_LOOP_SCHEDULER: BatchScheduler = {
  now: () => performance.now(),
  after: (ms, task) => {
    const timer = setTimeout(task, ms);
    return () => clearTimeout(timer);
  },
  soon: (task) => {
    const immediate = setImmediate(task);
    return () => clearImmediate(immediate);
  },
};

/** The heartbeat interval, and (for tests) the scheduler and limits. */
export interface FollowBatchOptions {
  heartbeatMs: number;
  scheduler?: BatchScheduler;
  intervalMs?: number;
  maxBatchBytes?: number;
  maxPendingPerOwner?: number;
  smallBatchBytes?: number;
  floodBytes?: number;
}

interface Entry<O, T> {
  owner: O;
  item: T;
  bytes: number;
}

interface Batch<O, T> {
  entries: Entry<O, T>[];
  bytes: number;
}

/**
 * The batches of one stream carrying items of many owners (a Follow's follows). An item joins the
 * open batch, which is due on the next turn of the event loop when nothing was sent for an interval,
 * else at the interval's end; at once when it is full or an owner waits for room. `batches()` hands
 * out each due batch, and an empty one after `heartbeatMs` without any. An owner whose items not yet
 * taken reach its cap waits in `room()` until a batch of them is taken: the consumer came back for
 * the next batch, so the stream's reader took the last one.
 */
export class FollowBatches<O, T> {
  private readonly scheduler: BatchScheduler;
  private readonly intervalMs: number;
  private readonly maxBatchBytes: number;
  private readonly maxPendingPerOwner: number;
  private readonly smallBatchBytes: number;
  private readonly floodBytes: number;
  private flushingSoon = false;
  /** Per owner: what it added since `since` (within an interval), and until when it counts as flooding. */
  private readonly recent = new Map<O, { since: number; bytes: number; floodingUntil: number }>();
  /** Batches that went out full, oldest first; they go before the open one. */
  private readonly full: Batch<O, T>[] = [];
  private open: Batch<O, T> | undefined;
  private openDue = false;
  private cancelFlush: (() => void) | undefined;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private readonly untaken = new Map<O, number>();
  private readonly due = new ChangeSignal();
  private readonly taken = new ChangeSignal();
  private ended = false;
  private failure: { error: unknown } | undefined;

  constructor(private readonly options: FollowBatchOptions) {
    this.scheduler = options.scheduler ?? EVENT_LOOP_SCHEDULER;
    this.intervalMs = options.intervalMs ?? FOLLOW_BATCH_INTERVAL_MS;
    this.maxBatchBytes = options.maxBatchBytes ?? FOLLOW_BATCH_MAX_BYTES;
    this.maxPendingPerOwner = options.maxPendingPerOwner ?? FOLLOW_MAX_PENDING_PER_FOLLOW;
    this.smallBatchBytes = options.smallBatchBytes ?? FOLLOW_SMALL_BATCH_BYTES;
    this.floodBytes = options.floodBytes ?? FOLLOW_FLOOD_BYTES;
  }

  /** Adds `owner`'s item, counted as `bytes`, to the open batch. */
  add(owner: O, item: T, bytes: number): void {
    const batch = (this.open ??= { entries: [], bytes: 0 });
    batch.entries.push({ owner, item, bytes });
    batch.bytes += bytes;
    this.untaken.set(owner, (this.untaken.get(owner) ?? 0) + bytes);
    const now = this.scheduler.now();
    const flooding = this.flooding(owner, bytes, now);
    if (batch.bytes >= this.maxBatchBytes) {
      this.full.push(this.takeOpen()!);
      this.due.fire();
    } else if (batch.bytes < this.smallBatchBytes || flooding) {
      this.flushSoon();
    } else if (!this.openDue && !this.cancelFlush) {
      const wait = this.lastSentAt + this.intervalMs - now;
      if (wait > 0) this.cancelFlush = this.scheduler.after(wait, this.flush);
      else this.flushSoon();
    }
  }

  /** True while `owner`'s items not yet taken are under its cap. */
  hasRoom(owner: O): boolean {
    return (this.untaken.get(owner) ?? 0) < this.maxPendingPerOwner;
  }

  /**
   * Resolves once `owner` may add again. While it waits, its batch goes out on the next turn:
   * holding it for the interval would let a flood send one event per interval.
   */
  async room(owner: O, signal: AbortSignal): Promise<void> {
    while (!this.hasRoom(owner)) {
      if (this.open) this.flushSoon();
      await changedWithin(this.taken.next(), Number.POSITIVE_INFINITY, signal);
    }
  }

  /** Takes `owner`'s items out of the batches not yet handed out, and forgets its count. */
  drop(owner: O): void {
    for (const batch of [...this.full, this.open]) {
      if (!batch) continue;
      batch.entries = batch.entries.filter((entry) => entry.owner !== owner);
      batch.bytes = batch.entries.reduce((sum, entry) => sum + entry.bytes, 0);
    }
    this.full.splice(0, this.full.length, ...this.full.filter((batch) => batch.entries.length > 0));
    if (this.open?.entries.length === 0) this.takeOpen();
    this.untaken.delete(owner);
    this.recent.delete(owner);
  }

  /** No more items: what is held goes out at once, then `batches()` ends. */
  end(): void {
    this.ended = true;
    this.due.fire();
  }

  /** `batches()` throws `error` instead of handing out anything more. */
  fail(error: unknown): void {
    this.failure = { error };
    this.due.fire();
  }

  /** Each batch's items as it falls due, an empty batch as a heartbeat; rejects when `signal` aborts. */
  async *batches(signal: AbortSignal): AsyncGenerator<T[]> {
    const waiter = new ChangeWaiter(signal, this.scheduler.after);
    try {
      yield* this.dueBatches(waiter);
    } finally {
      waiter.close();
    }
  }

  private async *dueBatches(waiter: ChangeWaiter): AsyncGenerator<T[]> {
    for (;;) {
      const batch = await this.nextDue(waiter);
      if (!batch) return;
      yield batch.entries.map((entry) => entry.item);
      // Resumed: whoever reads the stream took the batch.
      for (const { owner, bytes } of batch.entries) {
        const left = (this.untaken.get(owner) ?? 0) - bytes;
        if (left > 0) this.untaken.set(owner, left);
        else this.untaken.delete(owner);
      }
      const now = this.scheduler.now();
      for (const [owner, recent] of this.recent) if (recent.floodingUntil <= now && now - recent.since > this.intervalMs) this.recent.delete(owner);
      this.taken.fire();
    }
  }

  private async nextDue(waiter: ChangeWaiter): Promise<Batch<O, T> | undefined> {
    for (;;) {
      if (this.failure) throw this.failure.error;
      const batch = this.full.shift() ?? (this.openDue || this.ended ? this.takeOpen() : undefined);
      if (batch) {
        this.lastSentAt = this.scheduler.now();
        return batch;
      }
      if (this.ended) return undefined;
      const woken = await waiter.wait(this.due.next(), this.options.heartbeatMs);
      if (!woken) return this.takeOpen() ?? { entries: [], bytes: 0 };
    }
  }

  /** Counts `bytes` added by `owner` now; true while it is flooding. */
  private flooding(owner: O, bytes: number, now: number): boolean {
    let recent = this.recent.get(owner);
    if (!recent || now - recent.since > this.intervalMs) {
      recent = { since: now, bytes: 0, floodingUntil: recent?.floodingUntil ?? 0 };
      this.recent.set(owner, recent);
    }
    recent.bytes += bytes;
    if (recent.bytes >= this.floodBytes) recent.floodingUntil = now + this.intervalMs;
    return recent.floodingUntil > now;
  }

  /** Makes the open batch due on the next turn, unless it already is. */
  private flushSoon(): void {
    if (this.openDue || this.flushingSoon) return;
    this.cancelFlush?.();
    this.flushingSoon = true;
    this.cancelFlush = this.scheduler.soon(this.flush);
  }

  private readonly flush = (): void => {
    this.cancelFlush = undefined;
    this.flushingSoon = false;
    this.openDue = true;
    this.due.fire();
  };

  private takeOpen(): Batch<O, T> | undefined {
    const batch = this.open;
    this.open = undefined;
    this.openDue = false;
    this.cancelFlush?.();
    this.cancelFlush = undefined;
    this.flushingSoon = false;
    return batch;
  }
}
