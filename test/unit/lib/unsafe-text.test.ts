import { describe, expect, it } from "vitest";
import { cappedSafeText, identifierCharacterProblem, printable, replaceUnsafeCharacters, unsafeCharacterIn } from "../../../lib/unsafe-text.js";

describe("the unsafe-character rule", () => {
  it("finds controls, DEL, C1 and bidirectional controls, and nothing in ordinary text", () => {
    for (const [text, found] of [
      ["a\nb", "U+000A"],
      ["\u007f", "U+007F"],
      ["next\u0085line", "U+0085"],
      ["csi\u009b", "U+009B"],
      ["txt.exe\u202egpj", "U+202E"],
      ["\u2066isolate", "U+2066"],
    ] as const) {
      expect(unsafeCharacterIn(text)).toBe(found);
    }
    expect(unsafeCharacterIn("build – 😀 ünïcödé")).toBeUndefined();
  });

  it("refuses invisible characters in identifiers only: zero-width space and joiner, word joiner, BOM, soft hyphen", () => {
    for (const [text, found] of [
      ["ahp-terminal:/ad\u200bmin", "U+200B"],
      ["a\u200db", "U+200D"],
      ["\ufeffid", "U+FEFF"],
      ["soft\u00adhyphen", "U+00AD"],
      ["w\u2060j", "U+2060"],
      ["bidi\u202e", "U+202E"],
    ] as const) {
      expect(identifierCharacterProblem(text)).toBe(found);
    }
    expect(identifierCharacterProblem("ahp-terminal:/b12cf60c-85c7")).toBeUndefined();
    expect(unsafeCharacterIn("family 👨\u200d👩\u200d👧")).toBeUndefined();
  });

  it("replaces each unsafe character with U+FFFD and leaves the rest", () => {
    expect(replaceUnsafeCharacters("a\r\nb\u202ec 👨\u200d👩")).toBe("a\ufffd\ufffdb\ufffdc 👨\u200d👩");
  });

  it("cuts a text to length without splitting a surrogate pair, and replaces its unsafe characters", () => {
    expect(cappedSafeText("VS\u0007Code", 100)).toBe("VS\ufffdCode");
    expect(cappedSafeText("abcdef", 4)).toBe("abcd");
    expect(cappedSafeText("abc😀", 4)).toBe("abc");
    expect(cappedSafeText("ab😀", 4)).toBe("ab😀");
  });

  it("prints unsafe characters as escapes, so a name cannot start a line, move the cursor or turn text around", () => {
    expect(printable("innocent\nahp-terminal:/admin\tforged\u001b[2J\u202e\u0085")).toBe("innocent\\nahp-terminal:/admin\\tforged\\e[2J\\u{202E}\\u{85}");
    expect(printable("plain title")).toBe("plain title");
  });
});
