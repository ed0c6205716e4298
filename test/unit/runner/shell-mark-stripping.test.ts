import { describe, expect, it } from "vitest";
import { OutputLog, outputBytes, type LogCursor, type ReadEvent } from "../../../services/runner/log/output-log.js";
import { MAX_OSC_PAYLOAD_BYTES } from "../../../services/runner/shell/osc-reader.js";
import { planSpawn } from "../../../services/runner/spawn/spawn-plan.js";
import { Terminal } from "../../../services/runner/terminal/terminal.js";
import { FakeLauncher, type FakeProcess } from "./fake-launcher.js";

const osc = (payload: string, terminator = "\x07"): string => `\x1b]${payload}${terminator}`;
/** What a reader that strips marks must see: the text with every complete OSC 133, 633 and 7 removed. */
const withoutMarks = (text: string): string => text.replace(/\x1b\](?:133|633|7);[^\x07\x1b]*(?:\x07|\x1b\\)/g, "");

/** Prompts, a command, marks back to back, both terminators, a title, other escapes, a lone ESC, an OSC cut short by another escape, and a look-alike (1337). */
const STREAM =
  osc("133;A") + "$ " + osc("133;B") + "echo hi\r\n" + osc("133;C") + "hi \x1b[31mred\x1b[0m\r\n" + osc("133;D;0") +
  osc("7;file://h/tmp", "\x1b\\") + osc("633;P;Cwd=/srv") + osc("0;a title") + osc("1337;SetMark") + "\x1b\x1b[1mbold" +
  "\x1b]133;A\x1b[0m" + "\x1b]133;A" + osc("133;B") + osc("133;A") + osc("133;B") + "$ ";

function startTerminal(): { terminal: Terminal; process: FakeProcess } {
  const launcher = new FakeLauncher();
  const plan = planSpawn({ argv: ["sh"], command: "", shell: "", cwd: "", env: {}, cols: 80, rows: 24, isPty: true, title: "" }, { env: { PATH: process.env.PATH }, cwd: "/" });
  const terminal = new Terminal("t", new OutputLog(1 << 20), plan, true, { cols: 80, rows: 24 }, {});
  terminal.start(launcher);
  return { terminal, process: launcher.last() };
}

/** Reads a log from one cursor on, as an Attach stream does, keeping everything it was given. */
class Reader {
  readonly events: ReadEvent[] = [];
  private cursor: LogCursor;

  constructor(
    private readonly log: OutputLog,
    private readonly strip: boolean,
    from = 0,
  ) {
    this.cursor = log.cursorAt(from);
  }

  /** Takes whatever the log has for this reader now. */
  take(): this {
    for (;;) {
      const read = this.log.read(this.cursor, 1 << 20, this.strip);
      this.cursor = read.cursor;
      this.events.push(...read.events);
      if (read.events.length === 0) return this;
    }
  }

  get text(): string {
    return Buffer.concat(this.events.flatMap(({ event }) => (event.kind === "output" ? [outputBytes(event)] : []))).toString("latin1");
  }

  /** Every other event, with what identifies it (times left out: they come from the clock). */
  get marks(): string[] {
    return this.events.flatMap(({ offset, event }) => {
      if (event.kind === "output") return [];
      const detail = "commandLine" in event ? event.commandLine : "cwd" in event ? event.cwd : "title" in event ? event.title : "exitCode" in event ? event.exitCode : "";
      return [`${offset} ${event.kind} ${detail}`];
    });
  }

  /** The log ranges its output events covered, in order. */
  get ranges(): Array<[number, number]> {
    return this.events.flatMap(({ offset, event }) => (event.kind === "output" ? [[offset, event.end] as [number, number]] : []));
  }
}

/** Feeds `chunks` as separate reads, a stripping reader taking what it may after each one. */
function feed(chunks: string[]): { terminal: Terminal; stripped: Reader } {
  const { terminal, process } = startTerminal();
  const stripped = new Reader(terminal.log, true);
  for (const chunk of chunks) {
    process.emit(Buffer.from(chunk, "latin1"));
    stripped.take();
  }
  return { terminal, stripped };
}

/** True when the ranges follow each other without a hole or an overlap from `from` to `to`. */
function tiles(ranges: Array<[number, number]>, from: number, to: number): boolean {
  let at = from;
  for (const [start, end] of ranges) {
    if (start !== at || end < start) return false;
    at = end;
  }
  return at === to;
}

describe("shell marks left out of output for readers that ask", () => {
  const whole = feed([STREAM]);
  const raw = new Reader(whole.terminal.log, false).take();

  it("gives the reader that strips the text without OSC 133, 633 and 7, and the same events at the same offsets as the raw reader", () => {
    expect(whole.stripped.text).toBe(withoutMarks(STREAM));
    expect(whole.stripped.text).toContain("\x1b]0;a title\x07");
    expect(whole.stripped.text).toContain("\x1b]1337;SetMark\x07");
    expect(whole.stripped.text).toContain("\x1b]133;A\x1b[0m");
    expect(whole.stripped.marks).toEqual(raw.marks);
    expect(raw.marks.some((mark) => mark.includes("command_finished 0"))).toBe(true);
    expect(raw.marks.some((mark) => mark.includes("cwd_changed /srv"))).toBe(true);
  });

  it("leaves the raw reader's bytes exactly as written", () => {
    expect(raw.text).toBe(STREAM);
    for (const { offset, event } of raw.events) if (event.kind === "output") expect(event.end).toBe(offset + outputBytes(event).length);
  });

  it("covers the whole log with its output ranges, marks included, so offsets stay those of the log", () => {
    expect(tiles(whole.stripped.ranges, 0, STREAM.length)).toBe(true);
    expect(whole.terminal.log.endOffset).toBe(STREAM.length);
  });

  it("leaks no part of a mark, whichever place a read cuts it at", () => {
    for (let cut = 1; cut < STREAM.length; cut++) {
      const { stripped } = feed([STREAM.slice(0, cut), STREAM.slice(cut)]);
      expect(stripped.text, `cut at ${cut}`).toBe(withoutMarks(STREAM));
      expect(stripped.marks, `cut at ${cut}`).toEqual(raw.marks);
      expect(tiles(stripped.ranges, 0, STREAM.length), `cut at ${cut}`).toBe(true);
    }
  });

  it("leaks nothing when reads cut a mark in three, or deliver one byte at a time", () => {
    for (let first = 1; first < STREAM.length; first++) {
      for (let second = first + 1; second < Math.min(first + 20, STREAM.length); second++) {
        const { stripped } = feed([STREAM.slice(0, first), STREAM.slice(first, second), STREAM.slice(second)]);
        expect(stripped.text, `cuts at ${first} and ${second}`).toBe(withoutMarks(STREAM));
      }
    }
    const byteByByte = feed([...STREAM]);
    expect(byteByByte.stripped.text).toBe(withoutMarks(STREAM));
    expect(byteByByte.stripped.marks).toEqual(raw.marks);
  });

  it("gives a reader that comes back from any end offset exactly the rest: nothing lost, nothing repeated", () => {
    const { terminal, stripped } = feed([...STREAM]);
    const ends = stripped.ranges.map(([, end]) => end);
    expect(ends.length).toBeGreaterThan(10);
    for (const end of ends) {
      const upTo = stripped.events.filter(({ event }) => event.kind === "output" && event.end <= end);
      const head = Buffer.concat(upTo.map(({ event }) => (event.kind === "output" ? outputBytes(event) : Buffer.alloc(0)))).toString("latin1");
      const rest = new Reader(terminal.log, true, end).take();
      expect(head + rest.text, `again from ${end}`).toBe(withoutMarks(STREAM));
      expect(rest.text).toBe(withoutMarks(STREAM.slice(end)));
      expect(tiles(rest.ranges, end, STREAM.length)).toBe(true);
    }
  });
});

describe("an unfinished mark", () => {
  it("is held back from the reader that strips, while the raw reader gets it at once", () => {
    const { terminal, process } = startTerminal();
    const stripped = new Reader(terminal.log, true);
    process.emit("text \x1b]133;D;");
    expect(stripped.take().text).toBe("text ");
    expect(stripped.ranges).toEqual([[0, 5]]);
    expect(new Reader(terminal.log, false).take().text).toBe("text \x1b]133;D;");
    process.emit("0\x07after");
    expect(stripped.take().text).toBe("text after");
    expect(tiles(stripped.ranges, 0, terminal.log.endOffset)).toBe(true);
  });

  it("passes unchanged once the process exits without finishing it", () => {
    const { terminal, process } = startTerminal();
    const stripped = new Reader(terminal.log, true);
    process.emit("text \x1b]133;D;");
    stripped.take();
    process.exit({ exitCode: 0, signal: "" });
    stripped.take();
    expect(stripped.text).toBe("text \x1b]133;D;");
    expect(stripped.events.at(-1)!.event.kind).toBe("exited");
  });

  it("is a mark up to the longest payload the runner reads, and past it passes unchanged without being waited for", () => {
    const atBound = "133;" + "x".repeat(MAX_OSC_PAYLOAD_BYTES - 4);
    const kept = feed(["a\x1b]" + atBound, "\x07b"]);
    expect(kept.stripped.text).toBe("ab");

    const { terminal, process } = startTerminal();
    const stripped = new Reader(terminal.log, true);
    const tooLong = "\x1b]133;" + "x".repeat(MAX_OSC_PAYLOAD_BYTES);
    process.emit("a" + tooLong.slice(0, 1000));
    expect(stripped.take().text).toBe("a");
    process.emit(tooLong.slice(1000));
    // Past the bound it can no longer be a mark: everything so far goes out, though it is not finished.
    expect(stripped.take().text).toBe("a" + tooLong);
    process.emit("\x07b");
    expect(stripped.take().text).toBe("a" + tooLong + "\x07b");
    expect(new Reader(terminal.log, false).take().marks).toEqual([]);
  });

  it("leaks no tail of a mark whose start retention evicted or Clear dropped", () => {
    const log = new OutputLog(9);
    log.appendOutput(Buffer.from("ab"));
    log.appendOutput(Buffer.from("\x1b]133;A"), "unsettled");
    const held = log.read(log.cursorAt(0), 1024, true);
    expect(held.events.map(({ offset, event }) => event.kind === "output" && [offset, outputBytes(event).toString(), event.end])).toEqual([[0, "ab", 2]]);
    log.appendOutput(Buffer.from("\x07"), "mark");
    log.appendOutput(Buffer.from("cd"));
    // Retention now starts inside the mark: a reader from there gets a gap and none of the mark's tail.
    const late = log.read(log.cursorAt(0), 1024, true);
    expect(late.gap).toEqual({ from: 0, to: 3 });
    expect(late.events.map(({ offset, event }) => event.kind === "output" && [offset, outputBytes(event).toString(), event.end])).toEqual([[3, "cd", 12]]);

    const { terminal, process } = startTerminal();
    process.emit("ab\x1b]133;");
    terminal.clear();
    process.emit("A\x07cd");
    const afterClear = new Reader(terminal.log, true).take();
    expect(afterClear.text).toBe("cd");
    expect(new Reader(terminal.log, false).take().text).toBe("A\x07cd");
  });
});
