/**
 * Bytes of one block: a scrollback of 200,000 one-byte characters takes 13 of them, and a rope's
 * unused tail wastes less than one. Below glibc's mmap threshold (128 KiB), so a block comes from
 * the heap malloc already holds and goes back to it, rather than being mapped fresh and unmapped.
 */
export const TEXT_BLOCK_BYTES = 16 * 1024;
/** Free blocks kept for reuse (32 MiB); a block given back past this is left to the collector. */
const MAX_FREE_BLOCKS = 2048;

/**
 * Fixed-size buffers outside V8's heap that every terminal's scrollback of one gateway shares:
 * text cut from one rope's front is written over at another's end. Memory touched for the first
 * time costs a page fault per 4 KiB (about 20 µs on a virtual machine), so reusing what scrollback
 * already faulted in, rather than allocating as each terminal grows, is what makes keeping text
 * off the heap pay.
 */
export class TextBlocks {
  private readonly free: Buffer[] = [];

  /** Blocks waiting to be reused. */
  get freeCount(): number {
    return this.free.length;
  }

  /** A block to write into: the one given back last (likeliest still in cache), or a new one. */
  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(TEXT_BLOCK_BYTES);
  }

  /** Takes back a block nothing reads any more. */
  give(block: Buffer): void {
    if (this.free.length < MAX_FREE_BLOCKS) this.free.push(block);
  }
}
