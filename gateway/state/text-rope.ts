import { TEXT_BLOCK_BYTES, type TextBlocks } from "./text-blocks.js";

/** A character Latin-1 cannot hold: from the first one on, a rope keeps two bytes per character. */
const WIDE_CHARACTER = /[^\u0000-\u00ff]/;

/**
 * A growing text that keeps only its newest characters, in blocks shared through a `TextBlocks`
 * (outside V8's heap): one byte per character (Latin-1) until a character needs two, then UTF-16.
 * A terminal's scrollback lives for seconds; kept as the strings its output came in, each chunk
 * was copied by a young-generation collection and promoted, and with 100 busy terminals that was
 * the gateway's largest cost. Appending copies the text in once; cutting the front copies nothing
 * and gives emptied blocks back; the text is made a string only when it is asked for (a snapshot).
 */
export class TextRope {
  private blocks: Buffer[] = [];
  /** Bytes per character: 1 (Latin-1) or 2 (UTF-16LE). */
  private width: 1 | 2 = 1;
  /** Byte position of the first character kept, in the first block. */
  private first = 0;
  /** Bytes written in the last block. */
  private used = 0;
  private chars = 0;
  private joined: string | undefined;

  constructor(private readonly pool: TextBlocks) {}

  /** Characters held. */
  get length(): number {
    return this.chars;
  }

  /** Appends a piece. */
  append(text: string): void {
    if (text === "") return;
    this.joined = undefined;
    if (this.width === 1 && WIDE_CHARACTER.test(text)) this.widen();
    const encoding = this.width === 1 ? "latin1" : "utf16le";
    let at = 0;
    while (at < text.length) {
      if (this.blocks.length === 0 || this.used === TEXT_BLOCK_BYTES) {
        this.blocks.push(this.pool.take());
        this.used = 0;
      }
      const count = Math.min(text.length - at, (TEXT_BLOCK_BYTES - this.used) / this.width);
      this.blocks.at(-1)!.write(count === text.length ? text : text.slice(at, at + count), this.used, encoding);
      this.used += count * this.width;
      at += count;
    }
    this.chars += text.length;
  }

  /**
   * Cuts about `count` characters from the front, one more when the cut would fall between the two
   * halves of a surrogate pair (half a character is never kept). Returns how many were cut.
   */
  cutFront(count: number): number {
    let cut = Math.min(Math.max(0, count), this.chars);
    if (cut === 0) return 0;
    if (cut === this.chars) {
      this.release();
      return cut;
    }
    if (this.width === 2 && isLowSurrogate(this.codeUnitAt(cut))) cut++;
    this.joined = undefined;
    this.chars -= cut;
    this.first += cut * this.width;
    while (this.first >= TEXT_BLOCK_BYTES) {
      this.pool.give(this.blocks.shift()!);
      this.first -= TEXT_BLOCK_BYTES;
    }
    return cut;
  }

  /** The whole text (made once; later calls reuse it until the rope changes). */
  text(): string {
    if (this.chars === 0) return "";
    return (this.joined ??= this.read());
  }

  /** Gives every block back and holds nothing (the rope may be used again). */
  release(): void {
    for (const block of this.blocks) this.pool.give(block);
    this.blocks = [];
    this.width = 1;
    this.first = 0;
    this.used = 0;
    this.chars = 0;
    this.joined = undefined;
  }

  private read(): string {
    const encoding = this.width === 1 ? "latin1" : "utf16le";
    const last = this.blocks.length - 1;
    // A surrogate pair split between blocks comes back whole: UTF-16LE is decoded code unit by code unit.
    const pieces = this.blocks.map((block, i) => block.toString(encoding, i === 0 ? this.first : 0, i === last ? this.used : TEXT_BLOCK_BYTES));
    return pieces.length === 1 ? pieces[0]! : pieces.join("");
  }

  /** The UTF-16 code unit at character `index` (a two-byte rope). */
  private codeUnitAt(index: number): number {
    const at = this.first + index * 2;
    return this.blocks[Math.floor(at / TEXT_BLOCK_BYTES)]!.readUInt16LE(at % TEXT_BLOCK_BYTES);
  }

  /** From now on, two bytes per character: what is kept is written again as UTF-16. */
  private widen(): void {
    const kept = this.text();
    this.release();
    this.width = 2;
    if (kept !== "") this.append(kept);
  }
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
