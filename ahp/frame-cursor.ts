import type { Uri } from "./types.js";

/** Outer characters one input character can grow to: `\u001b` inside the inner JSON becomes `\\u001b` (7), plus room to spare. */
const WORST_ESCAPE_CHARS = 8;

/** The outer text of a `channel/frame` notification around `escaped` (a JSON string literal). */
function frameText(prefix: string, escaped: string, final: boolean): string {
  return `${prefix}${escaped}${final ? FINAL_SUFFIX : SUFFIX}`;
}

const SUFFIX = "}}";
const FINAL_SUFFIX = ',"final":true}}';

function prefixOf(channel: Uri): string {
  return `{"jsonrpc":"2.0","method":"channel/frame","params":{"channel":${JSON.stringify(channel)},"data":`;
}

/** The smallest `maximumFrameBytes` that can carry every character on `channel`. */
export function minimumFrameBytes(channel: Uri): number {
  return (prefixOf(channel).length + FINAL_SUFFIX.length + WORST_ESCAPE_CHARS) * 2;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Cuts one logical message into `channel/frame` notifications, each at most `maximumFrameBytes`
 * (UTF-16 bytes of the whole outer frame, escaping included), never splitting a surrogate pair.
 * Frames are made one at a time, so a scheduler can interleave them with other channels'. The
 * escaping ratio of the last fragment guesses the next one's length; a guess that does not fit is
 * shrunk in proportion, so a fragment costs one serialization in the common case.
 */
export class FrameCursor {
  private position = 0;
  private ratio = 1;
  private readonly prefix: string;
  private readonly budget: number;

  constructor(
    channel: Uri,
    private readonly text: string,
    maximumFrameBytes: number,
  ) {
    this.prefix = prefixOf(channel);
    this.budget = Math.floor(maximumFrameBytes / 2) - this.prefix.length - FINAL_SUFFIX.length;
    if (this.budget < WORST_ESCAPE_CHARS) throw new RangeError(`maximumFrameBytes ${maximumFrameBytes} is below ${minimumFrameBytes(channel)} for ${channel}`);
    if (text === "") throw new RangeError("a logical message is never empty");
  }

  /** True once every fragment has been made. */
  get done(): boolean {
    return this.position >= this.text.length;
  }

  /** The next frame's text; the last one carries `final: true`. */
  next(): string {
    const { text, position, budget } = this;
    const left = text.length - position;
    let count = Math.max(1, Math.min(left, Math.floor((budget - 2) / this.ratio)));
    for (;;) {
      if (count < left && isHighSurrogate(text.charCodeAt(position + count - 1))) count = count > 1 ? count - 1 : 2;
      const escaped = JSON.stringify(text.slice(position, position + count));
      if (escaped.length <= budget || count === 1) {
        this.ratio = Math.max(1, (escaped.length - 2) / count);
        this.position += count;
        return frameText(this.prefix, escaped, this.done);
      }
      count = Math.max(1, Math.min(count - 1, Math.floor((count * (budget - 2)) / (escaped.length - 2))));
    }
  }
}
