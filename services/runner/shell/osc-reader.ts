import { titleFromProgram } from "../../../lib/titles.js";

/** One complete OSC sequence found in the output: its payload and where in the chunk it ended. */
export interface OscSequence {
  /** The text between `ESC ]` and the terminator, e.g. `0;my title` or `133;D;0`. */
  payload: string;
  /** Index in the fed chunk just past the terminator. */
  end: number;
}

const ESC = 0x1b;
const BEL = 0x07;
const RIGHT_BRACKET = 0x5d;
const BACKSLASH = 0x5c;
/** Longest OSC payload kept; longer ones are dropped (titles and shell marks are far shorter, a command line rarely is). */
const MAX_OSC_PAYLOAD_BYTES = 64 * 1024;

type State = "text" | "escape" | "osc" | "osc_escape";

/**
 * Finds OSC sequences (`ESC ] payload BEL` or `ESC ] payload ESC \`) in a byte stream fed in
 * arbitrary chunks, so a sequence split across two reads is still found. It only reads: the bytes
 * themselves are left for subscribers untouched.
 */
export class OscReader {
  private state: State = "text";
  private parts: Buffer[] = [];
  private size = 0;

  /** Feeds the next chunk and returns the sequences that were completed in it. */
  feed(chunk: Buffer): OscSequence[] {
    const found: OscSequence[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (this.state === "text") {
        const esc = chunk.indexOf(ESC, i);
        if (esc < 0) break;
        this.state = "escape";
        i = esc + 1;
      } else if (this.state === "escape") {
        this.state = chunk[i] === RIGHT_BRACKET ? "osc" : chunk[i] === ESC ? "escape" : "text";
        i++;
      } else if (this.state === "osc") {
        let j = i;
        while (j < chunk.length && chunk[j] !== BEL && chunk[j] !== ESC) j++;
        this.collect(chunk.subarray(i, j));
        if (j === chunk.length) break;
        if (chunk[j] === BEL) this.complete(found, j + 1);
        else this.state = "osc_escape";
        i = j + 1;
      } else {
        if (chunk[i] === BACKSLASH) {
          this.complete(found, i + 1);
          i++;
        } else {
          this.reset();
          this.state = "escape";
        }
      }
    }
    return found;
  }

  private collect(bytes: Buffer): void {
    if (bytes.length === 0 || this.size > MAX_OSC_PAYLOAD_BYTES) return;
    this.parts.push(Buffer.from(bytes));
    this.size += bytes.length;
  }

  private complete(found: OscSequence[], end: number): void {
    if (this.size <= MAX_OSC_PAYLOAD_BYTES) found.push({ payload: Buffer.concat(this.parts).toString("utf8"), end });
    this.reset();
  }

  private reset(): void {
    this.parts = [];
    this.size = 0;
    this.state = "text";
  }
}

/** The window title an OSC payload sets (OSC 0 and OSC 2), made to pass the title rule, or undefined for any other sequence. */
export function titleFromOsc(payload: string): string | undefined {
  const match = /^[02];/.exec(payload);
  return match ? titleFromProgram(payload.slice(2)) : undefined;
}
