/**
 * How many typed characters wait for the gateway to come back: minutes of typing, while a paste
 * larger than this into a screen the typist cannot see is better redone than sent late.
 */
export const MAX_WAITING_INPUT_CHARS = 4_096;

/** Input for one terminal, as typed. */
export interface WaitingInput {
  channel: string;
  data: string;
}

/** Input dispatched with `clientSeq` whose echo has not come back yet. */
export interface SentInput extends WaitingInput {
  clientSeq: number;
}

/**
 * Keys typed while the gateway cannot be reached, kept in order to be sent once it can. Bounded:
 * once the input would pass the bound it is refused, and so is everything typed after it until the
 * outbox is drained, so what is sent is always a beginning of what was typed, never one with holes.
 * It also remembers input sent but not yet echoed, which a socket that died unnoticed may have lost:
 * the page sends it again, with its `clientSeq`, after a reconnect (the gateway drops repeats).
 */
export class InputOutbox {
  private readonly waiting: WaitingInput[] = [];
  private readonly unconfirmed: SentInput[] = [];
  private unconfirmedChars = 0;
  private waitingChars = 0;
  private droppedChars = 0;

  constructor(private readonly limitChars = MAX_WAITING_INPUT_CHARS) {}

  /** Characters kept to be sent. */
  get waitingCount(): number {
    return this.waitingChars;
  }

  /** Characters refused since the outbox was last drained. */
  get droppedCount(): number {
    return this.droppedChars;
  }

  /** Keeps `data` typed into `channel`; false when it was refused (the outbox is full). */
  add(channel: string, data: string): boolean {
    if (this.droppedChars > 0 || this.waitingChars + data.length > this.limitChars) {
      this.droppedChars += data.length;
      return false;
    }
    const last = this.waiting.at(-1);
    if (last?.channel === channel) last.data += data;
    else this.waiting.push({ channel, data });
    this.waitingChars += data.length;
    return true;
  }

  /**
   * Remembers input just dispatched until its echo comes back. Past the bound the oldest is forgotten:
   * that much typing in flight means the socket was carrying it, not swallowing it.
   */
  sent(input: SentInput): void {
    this.unconfirmed.push(input);
    this.unconfirmedChars += input.data.length;
    while (this.unconfirmedChars > this.limitChars) this.unconfirmedChars -= this.unconfirmed.shift()!.data.length;
  }

  /** The gateway echoed (or refused) this page's action `clientSeq`: it and everything dispatched before it arrived. */
  confirm(clientSeq: number): void {
    while (this.unconfirmed.length && this.unconfirmed[0]!.clientSeq <= clientSeq) this.unconfirmedChars -= this.unconfirmed.shift()!.data.length;
  }

  /** Hands over the input sent but never echoed, oldest first, and forgets it. */
  takeUnconfirmed(): SentInput[] {
    this.unconfirmedChars = 0;
    return this.unconfirmed.splice(0);
  }

  /** Hands over everything kept, oldest first, and starts over (the count of refused characters too). */
  drain(): WaitingInput[] {
    const kept = this.waiting.splice(0);
    this.waitingChars = 0;
    this.droppedChars = 0;
    return kept;
  }
}
