import { describe, expect, it } from "vitest";
import { countMarked, type Marks } from "../../../bench/measures/marked-output.js";

const LINE = `${"0".repeat(4000)}\r\n`;
const MARKS: Marks = { firstLine: "0".repeat(100), lastLineEnd: `${"0".repeat(32)}\r\n`, end: /produced:(\d+)\r\n/ };

/** A terminal's output source fed by the test, in the chunks it chooses. */
function source() {
  let listener: (text: string) => void = () => {};
  return { output: (l: (text: string) => void) => (listener = l), write: (text: string) => listener(text) };
}

/** `text` cut into pieces of `size` characters, as reads of a pty hand it out. */
const chunks = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

const PROMPT = "\x1b]133;A\x07root@host:~# ";
const COMMAND = `end=$((SECONDS+8)); i=0; while ((SECONDS < end)); do printf '%06d%03994d\\n' $((i++)) 0; read -rt 0.1 _; done; echo "produced:$i"\r\n`;
/** What `promise` settled with by the next turn of the event loop: the count runs synchronously as reads arrive. */
const settled = <T>(promise: Promise<T>) => Promise.race([promise, new Promise<never>((_, fail) => setImmediate(() => fail(new Error("not settled"))))]);

const output = (lines: number) => `${COMMAND}${LINE.repeat(lines)}produced:${lines}\r\n${PROMPT}`;

describe("countMarked", () => {
  it("counts exactly the program's characters, whatever the reads' sizes, with the mark split across reads", async () => {
    for (const size of [1, 7, 4096, 50_000]) {
      const { output: listen, write } = source();
      const count = countMarked(listen, MARKS);
      write(PROMPT);
      count.start();
      for (const piece of chunks(output(12), size)) write(piece);
      const { chars, mark } = await settled(count.done);
      expect(chars, `reads of ${size}`).toBe(12 * LINE.length);
      expect(mark[1]).toBe("12");
      expect(count.seen).toBe(output(12).length);
    }
  });

  it("counts fewer characters when a read went missing, so a lost byte shows", async () => {
    const { output: listen, write } = source();
    const count = countMarked(listen, MARKS);
    count.start();
    const pieces = chunks(output(5), 1000);
    pieces.splice(10, 1);
    for (const piece of pieces) write(piece);
    expect((await settled(count.done)).chars).toBe(5 * LINE.length - 1000);
  });

  it("ignores what arrived before it was started", async () => {
    const { output: listen, write } = source();
    const count = countMarked(listen, MARKS);
    write(`${LINE}produced:1\r\n`);
    count.start();
    write(output(2));
    expect((await settled(count.done)).chars).toBe(2 * LINE.length);
  });

  it("fails when the program's first line never comes", async () => {
    const { output: listen, write } = source();
    const count = countMarked(listen, MARKS);
    count.start();
    for (let i = 0; i < 100; i++) write(`bash: syntax error${" ".repeat(1000)}\r\n`);
    await expect(settled(count.done)).rejects.toThrow(/no output of the program/);
  });
});
