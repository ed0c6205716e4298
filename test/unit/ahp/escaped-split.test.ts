import { describe, expect, it } from "vitest";
import { splitForEscapedLength } from "../../../ahp/escaped-split.js";
import { seededRandom } from "../../support/seeded-random.js";

describe("splitForEscapedLength", () => {
  it("keeps text that fits whole", () => {
    expect(splitForEscapedLength("hello", 8)).toEqual(["hello"]);
    expect(splitForEscapedLength("x".repeat(100), 102)).toEqual(["x".repeat(100)]);
  });

  it("cuts text so every piece's JSON literal fits, joins back to the text, and never splits a surrogate pair", () => {
    const random = seededRandom(7);
    const alphabet = ["a", "é", "日", "😀", "\u001b", "\r\n", "\\", '"', "\t", "\ud800", "\udc00"];
    for (let round = 0; round < 200; round++) {
      const text = Array.from({ length: Math.floor(random() * 400) }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
      const budget = 8 + Math.floor(random() * 120);
      const pieces = splitForEscapedLength(text, budget);
      expect(pieces.join("")).toBe(text);
      for (const piece of pieces) {
        expect(JSON.stringify(piece).length).toBeLessThanOrEqual(budget);
        if (text !== "") expect(piece.length).toBeGreaterThan(0);
      }
      let at = 0;
      for (const piece of pieces.slice(0, -1)) {
        at += piece.length;
        const before = text.charCodeAt(at - 1);
        const after = text.charCodeAt(at);
        expect(before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff).toBe(false);
      }
    }
  });

  it("refuses a budget that cannot hold the quotes and one escaped character", () => {
    expect(() => splitForEscapedLength("x", 7)).toThrow(RangeError);
  });
});
