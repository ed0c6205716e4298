import { describe, expect, it } from "vitest";
import { CommandLineReader } from "../../../services/runner/shell/command-line.js";

function read(...chunks: string[]): CommandLineReader {
  const reader = new CommandLineReader();
  for (const chunk of chunks) reader.feed(Buffer.from(chunk));
  return reader;
}

describe("CommandLineReader", () => {
  it("returns a typed line without its carriage return", () => {
    expect(read("echo hi\r").takeLine()).toBe("echo hi");
  });

  it("applies backspace and delete, one character at a time, multi-byte ones whole", () => {
    expect(read("echo hx\x7fi\r").takeLine()).toBe("echo hi");
    expect(read("caf\u00e9\x08e\r").takeLine()).toBe("cafe");
    expect(read("ls -l\x7f\x7f\x7f\r").takeLine()).toBe("ls");
  });

  it("applies ^U and ^C to the whole line and ^W to the last word", () => {
    expect(read("rm -rf /\x15echo safe\r").takeLine()).toBe("echo safe");
    expect(read("oops\x03ls\r").takeLine()).toBe("ls");
    expect(read("git commit  \x17status\r").takeLine()).toBe("git status");
  });

  it("skips escape sequences such as arrow keys", () => {
    expect(read("ls\x1b[D\x1b[C -a\x1bOA\r").takeLine()).toBe("ls -a");
  });

  it("keeps lines typed ahead in order, and a character split across writes", () => {
    const euro = Buffer.from("€");
    const reader = new CommandLineReader();
    reader.feed(Buffer.from("first\rsecond "));
    reader.feed(euro.subarray(0, 2));
    reader.feed(Buffer.concat([euro.subarray(2), Buffer.from("\r")]));
    expect(reader.takeLine()).toBe("first");
    expect(reader.takeLine()).toBe("second €");
  });

  it("drops a line, and rewinds to a mark", () => {
    const reader = read("\r", "kept\r");
    reader.dropLine();
    const mark = reader.mark();
    reader.feed(Buffer.from("went to the program\rpart"));
    reader.rewind(mark);
    expect(reader.takeLine()).toBe("kept");
    expect(reader.takeLine()).toBe("");
  });
});
