import { describe, expect, it } from "vitest";
import { TEXT_BLOCK_BYTES, TextBlocks } from "../../../gateway/state/text-blocks.js";
import { TextRope } from "../../../gateway/state/text-rope.js";

describe("TextRope", () => {
  it("appends and cuts from the front, keeping the newest characters", () => {
    const rope = new TextRope(new TextBlocks());
    for (const piece of ["abc", "", "defg", "hi"]) rope.append(piece);
    expect(rope.length).toBe(9);
    expect(rope.cutFront(4)).toBe(4);
    expect(rope.text()).toBe("efghi");
    rope.append("jk");
    expect(rope.cutFront(1)).toBe(1);
    expect([rope.length, rope.text()]).toEqual([6, "fghijk"]);
    expect(rope.cutFront(100)).toBe(6);
    expect([rope.length, rope.text()]).toEqual([0, ""]);
  });

  it("never keeps the second half of a surrogate pair alone", () => {
    const rope = new TextRope(new TextBlocks());
    rope.append("a😀b");
    expect(rope.cutFront(2)).toBe(3);
    expect(rope.text()).toBe("b");
  });

  it("stays correct over many cuts", () => {
    const rope = new TextRope(new TextBlocks());
    let all = "";
    for (let i = 0; i < 5_000; i++) {
      const piece = `${i},`;
      rope.append(piece);
      all += piece;
      if (rope.length > 300) rope.cutFront(rope.length - 200);
    }
    expect(all.endsWith(rope.text())).toBe(true);
    expect(rope.length).toBe(rope.text().length);
  });

  it("keeps text across block borders exactly, Latin-1 and wider, a surrogate pair split between blocks included", () => {
    const blocks = new TextBlocks();
    const rope = new TextRope(blocks);
    const latin = "é".repeat(TEXT_BLOCK_BYTES - 3);
    rope.append(latin);
    rope.append("xyz\u00ff12");
    expect(rope.text()).toBe(`${latin}xyz\u00ff12`);
    // The first character past Latin-1 rewrites what is kept as UTF-16; a pair then straddles the next border.
    const wide = "ab".repeat(TEXT_BLOCK_BYTES / 2 - 4) + "😀".repeat(3);
    rope.append(wide);
    const all = `${latin}xyz\u00ff12${wide}`;
    expect([rope.length, rope.text()]).toEqual([all.length, all]);
    // Cut to where the straddling pair's low half is first: the cut takes the whole pair.
    const pairAt = all.indexOf("😀", TEXT_BLOCK_BYTES);
    expect(rope.cutFront(pairAt + 1)).toBe(pairAt + 2);
    expect(rope.text()).toBe(all.slice(pairAt + 2));
    // A lone surrogate comes back as it went in.
    rope.append("\ud800z");
    expect(rope.text()).toBe(`${all.slice(pairAt + 2)}\ud800z`);
  });

  it("gives blocks back as its front is cut and when released, and the next rope writes into them", () => {
    const blocks = new TextBlocks();
    const first = new TextRope(blocks);
    first.append("a".repeat(3 * TEXT_BLOCK_BYTES));
    expect(blocks.freeCount).toBe(0);
    first.cutFront(2 * TEXT_BLOCK_BYTES + 1);
    expect(blocks.freeCount).toBe(2);
    const second = new TextRope(blocks);
    second.append("b".repeat(TEXT_BLOCK_BYTES + 1));
    expect(blocks.freeCount).toBe(0);
    // The reused blocks held the first rope's text: nothing of it shows through.
    expect(second.text()).toBe("b".repeat(TEXT_BLOCK_BYTES + 1));
    expect(first.text()).toBe("a".repeat(TEXT_BLOCK_BYTES - 1));
    first.release();
    expect([first.length, first.text(), blocks.freeCount]).toEqual([0, "", 1]);
    first.append("again");
    expect(first.text()).toBe("again");
  });

  it("goes back to one byte a character once emptied", () => {
    const blocks = new TextBlocks();
    const rope = new TextRope(blocks);
    rope.append("ж");
    rope.cutFront(1);
    rope.append("a".repeat(TEXT_BLOCK_BYTES));
    expect(rope.text()).toBe("a".repeat(TEXT_BLOCK_BYTES));
    // One block held it (two, at two bytes a character).
    rope.release();
    expect(blocks.freeCount).toBe(1);
  });
});
