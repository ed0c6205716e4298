/** Dropped chunks at the front tolerated before the chunk array is compacted. */
const COMPACT_AFTER_CHUNKS = 256;

/**
 * A growing text kept as the chunks it arrived in: appending and cutting the front cost nothing
 * per character (no string is copied until the whole text is asked for), so a terminal's content
 * can take a flood chunk by chunk and keep only its newest characters.
 */
export class TextRope {
  private chunks: string[] = [];
  private head = 0;
  /** Characters already cut from `chunks[head]`. */
  private headCut = 0;
  private chars = 0;

  /** Characters held. */
  get length(): number {
    return this.chars;
  }

  /** Appends a piece. */
  append(text: string): void {
    if (text === "") return;
    this.chunks.push(text);
    this.chars += text.length;
  }

  /**
   * Cuts about `count` characters from the front, one more when the cut would fall between the two
   * halves of a surrogate pair (half a character is never kept). Returns how many were cut.
   */
  cutFront(count: number): number {
    let left = Math.min(count, this.chars);
    let cut = 0;
    while (left > 0) {
      const chunk = this.chunks[this.head]!;
      const rest = chunk.length - this.headCut;
      if (left >= rest) {
        this.dropHead();
        left -= rest;
        cut += rest;
        continue;
      }
      let at = this.headCut + left;
      if (isLowSurrogate(chunk.charCodeAt(at))) at++;
      cut += at - this.headCut;
      if (at === chunk.length) this.dropHead();
      else this.headCut = at;
      left = 0;
    }
    this.chars -= cut;
    if (this.head >= COMPACT_AFTER_CHUNKS) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
    return cut;
  }

  /** The whole text (joined once; later calls reuse it until more is appended). */
  text(): string {
    if (this.chars === 0) return "";
    const first = this.chunks[this.head]!.slice(this.headCut);
    const joined = this.head === this.chunks.length - 1 ? first : first + this.chunks.slice(this.head + 1).join("");
    this.chunks = [joined];
    this.head = 0;
    this.headCut = 0;
    return joined;
  }

  private dropHead(): void {
    this.chunks[this.head] = "";
    this.head++;
    this.headCut = 0;
  }
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
