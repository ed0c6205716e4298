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

/**
 * Keys typed while the gateway cannot be reached, kept in order to be sent once it can. Bounded:
 * once the input would pass the bound it is refused, and so is everything typed after it until the
 * outbox is drained, so what is sent is always a beginning of what was typed, never one with holes.
 */
export class InputOutbox {
  private readonly waiting: WaitingInput[] = [];
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

  /** Hands over everything kept, oldest first, and starts over (the count of refused characters too). */
  drain(): WaitingInput[] {
    const kept = this.waiting.splice(0);
    this.waitingChars = 0;
    this.droppedChars = 0;
    return kept;
  }
}
