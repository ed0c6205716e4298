import { describe, expect, it } from "vitest";
import { TextRing, type TextSpan } from "../../../gateway/state/text-ring.js";
import { seededRandom } from "../../support/seeded-random.js";

/** Pieces of every kind a terminal or a client can send: ASCII, Latin-1, CJK, astral, a lone surrogate, nothing. */
const KINDS = ["ls -la\r\n", "héllo wörld", "日本語のテキスト", "😀 emoji", "\ud800 lone", "", "\x1b[31mred\x1b[0m"];

describe("TextRing", () => {
  it("gives every kind of text back exactly as it came, lone surrogates included", () => {
    const ring = new TextRing(1024);
    const spans = KINDS.map((text) => ring.keep(text));
    expect(spans.map((span) => ring.read(span))).toEqual(KINDS);
  });

  it("starts a piece that would cross the end on a new lap, and writes over the oldest", () => {
    const ring = new TextRing(10);
    const first = ring.keep("aaaaaa");
    const second = ring.keep("bbbbb");
    expect(second.start).toBe(10);
    expect(ring.holds(first)).toBe(false);
    expect(() => ring.read(first)).toThrow(/written over/);
    expect(ring.read(second)).toBe("bbbbb");
    const third = ring.keep("ccccc");
    expect([ring.read(second), ring.read(third)]).toEqual(["bbbbb", "ccccc"]);
  });

  it("holds every recent piece intact, and at least its capacity less two of the longest pieces", () => {
    const random = seededRandom(7);
    const capacity = 500;
    const ring = new TextRing(capacity);
    const kept: Array<{ span: TextSpan; text: string }> = [];
    let longest = 0;
    for (let i = 0; i < 2000; i++) {
      const text = KINDS[Math.floor(random() * KINDS.length)]!.repeat(1 + Math.floor(random() * 6));
      longest = Math.max(longest, text.length);
      kept.push({ span: ring.keep(text), text });
      let heldChars = 0;
      for (let j = kept.length - 1; j >= 0 && ring.holds(kept[j]!.span); j--) {
        expect(ring.read(kept[j]!.span)).toBe(kept[j]!.text);
        heldChars += kept[j]!.text.length;
      }
      const total = kept.reduce((sum, piece) => sum + piece.text.length, 0);
      // Lost: the room left unused before a new lap, and the piece the oldest held position falls inside.
      expect(heldChars).toBeGreaterThanOrEqual(Math.min(total, capacity - 2 * longest));
    }
  });

  it("lets a text longer than the ring write over everything, itself included", () => {
    const ring = new TextRing(8);
    const before = ring.keep("abc");
    const long = ring.keep("x".repeat(9));
    expect(ring.holds(before)).toBe(false);
    expect(ring.holds(long)).toBe(false);
    const after = ring.keep("def");
    expect(ring.read(after)).toBe("def");
  });

  it("refuses a capacity that is not a positive integer", () => {
    expect(() => new TextRing(0)).toThrow(RangeError);
    expect(() => new TextRing(1.5)).toThrow(RangeError);
  });
});
