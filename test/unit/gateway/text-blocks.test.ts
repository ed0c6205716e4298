import { describe, expect, it } from "vitest";
import { TEXT_BLOCK_BYTES, TextBlocks } from "../../../gateway/state/text-blocks.js";

describe("TextBlocks", () => {
  it("hands out blocks of one size and reuses the one given back last", () => {
    const blocks = new TextBlocks();
    const a = blocks.take();
    const b = blocks.take();
    expect([a.length, b.length]).toEqual([TEXT_BLOCK_BYTES, TEXT_BLOCK_BYTES]);
    expect(a).not.toBe(b);
    blocks.give(a);
    blocks.give(b);
    expect(blocks.freeCount).toBe(2);
    expect(blocks.take()).toBe(b);
    expect(blocks.take()).toBe(a);
    expect(blocks.take()).not.toBe(a);
  });

  it("keeps at most 32 MiB of free blocks", () => {
    const blocks = new TextBlocks();
    const taken = Array.from({ length: 2100 }, () => blocks.take());
    for (const block of taken) blocks.give(block);
    expect(blocks.freeCount * TEXT_BLOCK_BYTES).toBe(32 * 1024 * 1024);
  });
});
