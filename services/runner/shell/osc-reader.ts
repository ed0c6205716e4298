import { titleFromProgram } from "../../../lib/titles.js";

/** One complete OSC sequence found in the output: its payload and where in the chunk it began and ended. */
export interface OscSequence {
  /** The text between `ESC ]` and the terminator, e.g. `0;my title` or `133;D;0`. */
  payload: string;
  /** Index in the fed chunk of its ESC; negative when it began in an earlier chunk. */
  start: number;
  /** Index in the fed chunk just past the terminator. */
  end: number;
}

/** A sequence still open after the last chunk (or an ESC that may start one) that may yet be reported. */
export interface PendingOsc {
  /** Index in the last fed chunk of its ESC; negative when it began in an earlier chunk. */
  start: number;
  /** Its first payload bytes (up to OSC_HEAD_BYTES, latin1), enough to tell which OSC it is; empty before `]`. */
  head: string;
  /** True when the chunk ended in an ESC inside it: the first half of its terminator, or the start of the next sequence. */
  escapeAtEnd: boolean;
}

const ESC = 0x1b;
const BEL = 0x07;
const RIGHT_BRACKET = 0x5d;
const BACKSLASH = 0x5c;
/** Longest OSC payload kept; longer ones are dropped (titles and shell marks are far shorter, a command line rarely is). */
export const MAX_OSC_PAYLOAD_BYTES = 64 * 1024;
/** Payload bytes kept apart for `pending()`: enough for the longest OSC number of interest and its `;` (`133;`). */
const OSC_HEAD_BYTES = 4;

type State = "text" | "escape" | "osc" | "osc_escape";

/**
 * Finds OSC sequences (`ESC ] payload BEL` or `ESC ] payload ESC \`) in a byte stream fed in
 * arbitrary chunks, so a sequence split across two reads is still found, with where it began. It
 * only reads: what to do with the bytes is up to the caller.
 */
export class OscReader {
  private state: State = "text";
  private parts: Buffer[] = [];
  private size = 0;
  private head = "";
  /** Stream position of the last chunk fed. */
  private chunkBase = 0;
  /** Stream position just past the last chunk fed. */
  private fed = 0;
  /** Stream position of the ESC that began the current sequence. */
  private startAt = 0;
  /** Stream position of an ESC inside an OSC: a terminator's first half, or the start of the next sequence. */
  private innerEscAt = 0;

  /** Feeds the next chunk and returns the sequences that were completed in it. */
  feed(chunk: Buffer): OscSequence[] {
    const found: OscSequence[] = [];
    const base = this.fed;
    this.chunkBase = base;
    this.fed += chunk.length;
    let i = 0;
    while (i < chunk.length) {
      if (this.state === "text") {
        const esc = chunk.indexOf(ESC, i);
        if (esc < 0) break;
        this.state = "escape";
        this.startAt = base + esc;
        i = esc + 1;
      } else if (this.state === "escape") {
        if (chunk[i] === RIGHT_BRACKET) this.state = "osc";
        else if (chunk[i] === ESC) this.startAt = base + i;
        else this.state = "text";
        i++;
      } else if (this.state === "osc") {
        let j = i;
        while (j < chunk.length && chunk[j] !== BEL && chunk[j] !== ESC) j++;
        this.collect(chunk.subarray(i, j));
        if (j === chunk.length) break;
        if (chunk[j] === BEL) this.complete(found, j + 1);
        else {
          this.state = "osc_escape";
          this.innerEscAt = base + j;
        }
        i = j + 1;
      } else {
        if (chunk[i] === BACKSLASH) {
          this.complete(found, i + 1);
          i++;
        } else {
          // The ESC did not end the OSC: the OSC is abandoned and the ESC starts whatever comes next.
          this.reset();
          this.state = "escape";
          this.startAt = this.innerEscAt;
        }
      }
    }
    return found;
  }

  /** The sequence left open by the last chunk, unless there is none or it is already too long to be reported. */
  pending(): PendingOsc | undefined {
    if (this.state === "text" || this.size > MAX_OSC_PAYLOAD_BYTES) return undefined;
    return { start: this.startAt - this.chunkBase, head: this.state === "escape" ? "" : this.head, escapeAtEnd: this.state === "osc_escape" };
  }

  private collect(bytes: Buffer): void {
    if (bytes.length === 0 || this.size > MAX_OSC_PAYLOAD_BYTES) return;
    if (this.head.length < OSC_HEAD_BYTES) this.head += bytes.subarray(0, OSC_HEAD_BYTES - this.head.length).toString("latin1");
    this.parts.push(Buffer.from(bytes));
    this.size += bytes.length;
  }

  private complete(found: OscSequence[], end: number): void {
    if (this.size <= MAX_OSC_PAYLOAD_BYTES) found.push({ payload: Buffer.concat(this.parts).toString("utf8"), start: this.startAt - this.chunkBase, end });
    this.reset();
  }

  private reset(): void {
    this.parts = [];
    this.size = 0;
    this.head = "";
    this.state = "text";
  }
}

/** The window title an OSC payload sets (OSC 0 and OSC 2), made to pass the title rule, or undefined for any other sequence. */
export function titleFromOsc(payload: string): string | undefined {
  const match = /^[02];/.exec(payload);
  return match ? titleFromProgram(payload.slice(2)) : undefined;
}
