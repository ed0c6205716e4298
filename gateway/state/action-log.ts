import type { ActionEnvelope, ActionOrigin, StateAction, Uri } from "../../ahp/types.js";
import { markOutputOffset } from "./output-offset.js";
import { TextRing, type TextSpan } from "./text-ring.js";

/** Envelopes kept for `reconnect`, at most. */
const REPLAY_MAX_ENVELOPES = 8192;
/** Characters of payload kept for `reconnect`, at most (terminal output dominates). */
const REPLAY_MAX_CHARS = 4 * 1024 * 1024;
/** What a non-output envelope counts against REPLAY_MAX_CHARS. */
const ENVELOPE_BASE_CHARS = 128;

/** A kept envelope; one that carries text (output, input) is kept without it, and `text` says where the text is. */
interface Kept {
  envelope: ActionEnvelope;
  text?: TextSpan;
}

/** What a kept envelope counts against REPLAY_MAX_CHARS. */
function charsOf(kept: Kept): number {
  return ENVELOPE_BASE_CHARS + (kept.text?.length ?? 0);
}

/** What readers of the log may ask: whether a position was issued here, whether the buffer reaches back to one, and the envelopes kept since one. */
export type ActionHistory = Pick<ActionLog, "serverSeq" | "issued" | "reaches" | "since">;

/**
 * The one global, strictly increasing `serverSeq`, and a bounded buffer of recent envelopes so a
 * client that reconnects soon enough gets exactly what it missed instead of fresh snapshots. The
 * sequence starts at `base` (above every number an earlier gateway issued, see server-seq-base.ts):
 * positions below it belong to someone else, and are never replayed from.
 */
export class ActionLog {
  private seq: number;
  /** Kept envelopes from `head` on; the slots before it are emptied as they are dropped, so nothing dropped stays reachable. */
  private readonly buffer: Array<Kept | undefined> = [];
  /**
   * The text of kept envelopes, off the heap: kept as strings, the buffer's output (up to 4 Mi
   * characters) was copied by every young-generation collection while it lived, which under a flood
   * cost the gateway a tenth to a sixth of its CPU.
   */
  private readonly texts = new TextRing(REPLAY_MAX_CHARS);
  private head = 0;
  private chars = 0;
  /** Per channel, the position from which its kept envelopes are whole again (its state was rebuilt there without envelopes). */
  private readonly restarts = new Map<Uri, number>();

  constructor(readonly base = 0) {
    if (!Number.isSafeInteger(base) || base < 0) throw new RangeError(`serverSeq base must be a non-negative safe integer, got ${base}`);
    this.seq = base;
  }

  /** The sequence number of the latest applied action. */
  get serverSeq(): number {
    return this.seq;
  }

  /** True when `seq` is a position of this log: from its base (what it reported before its first action) to the latest. */
  issued(seq: number): boolean {
    return Number.isSafeInteger(seq) && seq >= this.base && seq <= this.seq;
  }

  /** Stamps an applied action with the next sequence number (and output with the runner offset it ends at) and keeps it for replay. */
  append(channel: Uri, action: StateAction, origin?: ActionOrigin, outputOffset?: number): ActionEnvelope {
    const envelope: ActionEnvelope = { channel, action, serverSeq: ++this.seq };
    if (origin) envelope.origin = origin;
    // Marked before it is copied for keeping, so a replay carries the mark too.
    if (outputOffset !== undefined) markOutputOffset(envelope, outputOffset);
    // Text goes to the ring, beside a copy of its envelope without it: the envelope handed out, and its string, may die young.
    const kept: Kept =
      "data" in action
        ? { envelope: { ...envelope, action: { ...action, data: "" } }, text: this.texts.keep(action.data) }
        : { envelope };
    this.buffer.push(kept);
    this.chars += charsOf(kept);
    while (this.buffer.length - this.head > REPLAY_MAX_ENVELOPES || this.chars > REPLAY_MAX_CHARS || this.writtenOver(this.buffer[this.head])) {
      this.chars -= charsOf(this.buffer[this.head]!);
      // Left in place until the next compaction, a dropped envelope's output lived on for up to
      // 8,192 more actions: under busy terminals, every chunk of output lasted long enough to be
      // promoted to the old generation, which then grew at the output's rate and was collected again and again.
      this.buffer[this.head++] = undefined;
    }
    if (this.head > REPLAY_MAX_ENVELOPES) {
      this.buffer.splice(0, this.head);
      this.head = 0;
    }
    return envelope;
  }

  /** True when the ring wrote over the envelope's text (a piece that starts a new lap leaves the end's room unused, so this can come before the character budget). */
  private writtenOver(kept: Kept | undefined): boolean {
    return kept?.text !== undefined && !this.texts.holds(kept.text);
  }

  /** Stamps an action meant for one connection only (its own config): the sequence advances, nothing is kept for replay. */
  stampPrivate(channel: Uri, action: StateAction, origin?: ActionOrigin): ActionEnvelope {
    return origin ? { channel, action, serverSeq: ++this.seq, origin } : { channel, action, serverSeq: ++this.seq };
  }

  /**
   * Records that a channel's state was rebuilt without envelopes (from the runner's record): a
   * position is taken for it, and no client that saw less than that can be replayed to on it.
   */
  restart(channel: Uri): void {
    this.restarts.set(channel, ++this.seq);
  }

  /** Forgets a channel's restart (the channel is gone). */
  forget(channel: Uri): void {
    this.restarts.delete(channel);
  }

  /**
   * Every kept envelope after `lastSeen` on the given channels, or undefined when the buffer no
   * longer reaches back that far, or one of the channels was rebuilt after it.
   */
  since(lastSeen: number, channels: ReadonlySet<Uri>): ActionEnvelope[] | undefined {
    if (!this.reaches(lastSeen, channels)) return undefined;
    const envelopes: ActionEnvelope[] = [];
    for (let i = this.head; i < this.buffer.length; i++) {
      const { envelope, text } = this.buffer[i]!;
      if (envelope.serverSeq <= lastSeen || !channels.has(envelope.channel)) continue;
      envelopes.push(text ? { ...envelope, action: { ...envelope.action, data: this.texts.read(text) } as StateAction } : envelope);
    }
    return envelopes;
  }

  /** True when `since` would replay: the buffer reaches back to `lastSeen`, and none of the channels was rebuilt after it (nothing is read out). */
  reaches(lastSeen: number, channels: ReadonlySet<Uri>): boolean {
    if (!this.issued(lastSeen)) return false;
    for (const channel of channels) if ((this.restarts.get(channel) ?? 0) > lastSeen) return false;
    const oldest = this.head < this.buffer.length ? this.buffer[this.head]!.envelope.serverSeq : this.seq + 1;
    return lastSeen >= oldest - 1;
  }
}
