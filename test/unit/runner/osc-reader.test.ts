import { describe, expect, it } from "vitest";
import { titleProblem } from "../../../lib/titles.js";
import { OscReader, titleFromOsc } from "../../../services/runner/shell/osc-reader.js";

const stream = "before\x1b]0;first title\x07mid\x1b[31mred\x1b]133;D;1\x1b\\after\x1b]2;second\x07";

describe("OscReader", () => {
  it("finds OSC sequences terminated by BEL and by ST, with where each ended", () => {
    const chunk = Buffer.from(stream);
    const found = new OscReader().feed(chunk);
    expect(found.map((sequence) => sequence.payload)).toEqual(["0;first title", "133;D;1", "2;second"]);
    expect(chunk.subarray(0, found[0]!.end).toString()).toBe("before\x1b]0;first title\x07");
  });

  it("finds the same sequences when fed one byte at a time", () => {
    const reader = new OscReader();
    const payloads: string[] = [];
    for (const byte of Buffer.from(stream)) {
      for (const sequence of reader.feed(Buffer.from([byte]))) {
        expect(sequence.end).toBe(1);
        payloads.push(sequence.payload);
      }
    }
    expect(payloads).toEqual(["0;first title", "133;D;1", "2;second"]);
  });

  it("says where each sequence began (negative: in an earlier chunk) and what is left open after a chunk", () => {
    const reader = new OscReader();
    expect(reader.feed(Buffer.from("ab\x1b]133;A\x07cd\x1b]13"))).toEqual([{ payload: "133;A", start: 2, end: 10 }]);
    expect(reader.pending()).toEqual({ start: 12, head: "13", escapeAtEnd: false });
    expect(reader.feed(Buffer.from("3;D;0\x1b"))).toEqual([]);
    expect(reader.pending()).toEqual({ start: -4, head: "133;", escapeAtEnd: true });
    expect(reader.feed(Buffer.from("\\x"))).toEqual([{ payload: "133;D;0", start: -10, end: 1 }]);
    expect(reader.pending()).toBeUndefined();
    reader.feed(Buffer.from("\x1b"));
    expect(reader.pending()).toEqual({ start: 0, head: "", escapeAtEnd: false });
    reader.feed(Buffer.from("]0;" + "t".repeat(70 * 1024)));
    expect(reader.pending()).toBeUndefined();
  });

  it("decodes UTF-8 payloads split across chunks", () => {
    const bytes = Buffer.from("\x1b]0;café ✓\x07");
    const reader = new OscReader();
    const first = reader.feed(bytes.subarray(0, 9));
    const second = reader.feed(bytes.subarray(9));
    expect(first).toEqual([]);
    expect(second.map((sequence) => sequence.payload)).toEqual(["0;café ✓"]);
  });

  it("ignores other escape sequences and an ESC that interrupts an OSC", () => {
    const found = new OscReader().feed(Buffer.from("\x1b[2J\x1b]0;broken\x1b[0m\x1b]0;ok\x07"));
    expect(found.map((sequence) => sequence.payload)).toEqual(["0;ok"]);
  });

  it("drops a payload longer than the limit without losing the next sequence", () => {
    const reader = new OscReader();
    reader.feed(Buffer.from("\x1b]0;"));
    reader.feed(Buffer.alloc(70 * 1024, 0x61));
    const found = reader.feed(Buffer.from("\x07\x1b]2;next\x07"));
    expect(found.map((sequence) => sequence.payload)).toEqual(["2;next"]);
  });
});

describe("titleFromOsc", () => {
  it("reads OSC 0 and 2 as titles and nothing else", () => {
    expect(titleFromOsc("0;vim")).toBe("vim");
    expect(titleFromOsc("2;")).toBe("");
    expect(titleFromOsc("1;icon")).toBeUndefined();
    expect(titleFromOsc("133;A")).toBeUndefined();
  });
});

describe("titleFromOsc's cap", () => {
  it("cuts a program's title to 4 KiB, never between the halves of a surrogate pair", () => {
    expect(titleFromOsc(`2;${"t".repeat(100_000)}`)).toHaveLength(4096);
    const title = titleFromOsc(`0;${"x".repeat(4095)}😀tail`)!;
    expect(title).toBe("x".repeat(4095));
  });

  it("passes the title rule whatever the program sent: controls, C1 and bidirectional characters become U+FFFD", () => {
    const title = titleFromOsc("0;innocent\nahp-terminal:/admin\tforged\r\b\x7f\u0085\u009b\u202e")!;
    expect(titleProblem(title)).toBeUndefined();
    expect(title).toBe(`innocent\ufffdahp-terminal:/admin\ufffdforged${"\ufffd".repeat(6)}`);
  });
});
