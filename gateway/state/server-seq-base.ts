/**
 * serverSeq numbers each millisecond of wall-clock time stands for. A gateway starts its sequence
 * at `now * SERVER_SEQ_PER_MS`, so a restarted gateway begins above everything an earlier one issued
 * as long as that one issued fewer than this many per millisecond on average over its life (a
 * million envelopes a second; a flood through one gateway measures in the thousands). At this
 * rate the numbers stay safe integers until the year 2255.
 */
export const SERVER_SEQ_PER_MS = 1000;

/**
 * The first serverSeq of a gateway starting at `nowMs` (a Unix time in milliseconds). The clock is
 * read once, at start: a clock stepped later never makes the sequence go back, since it only counts
 * up from here. A clock stepped back between two starts by more than the earlier gateway's lifetime
 * could overlap its numbers; reconnect then still replays only what this gateway sent that client
 * (see ClientRegistry.couldHaveSeen), and snapshots everything else.
 */
export function serverSeqBaseAt(nowMs: number): number {
  const base = Math.floor(nowMs) * SERVER_SEQ_PER_MS;
  if (!Number.isSafeInteger(base) || base < 0) throw new RangeError(`the clock reads ${nowMs}: no serverSeq base can be derived from it`);
  return base;
}
