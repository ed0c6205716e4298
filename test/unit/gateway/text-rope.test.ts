import { describe, expect, it } from "vitest";
import { TextRope } from "../../../gateway/state/text-rope.js";

describe("TextRope", () => {
  it("appends and cuts from the front across chunk borders, keeping the newest characters", () => {
    const rope = new TextRope();
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
    const rope = new TextRope();
    rope.append("a😀b");
    expect(rope.cutFront(2)).toBe(3);
    expect(rope.text()).toBe("b");
  });

  it("stays correct over many cuts (the chunk array is compacted)", () => {
    const rope = new TextRope();
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
});
