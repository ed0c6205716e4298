import type { OutputSource } from "../probes.js";

/** How a program's output is told apart from the echoed command and prompts around it. */
export interface Marks {
  /** Text its first line starts with (not in the command that starts it). */
  firstLine: string;
  /** Text its last line ends with, \r\n included. */
  lastLineEnd: string;
  /** What the shell prints once it is done (not in the command as echoed); with `lastLineEnd`, at most OVERLAP_CHARS long. */
  end: RegExp;
}

/** Characters looked through for the first line (the prompt, the echoed command) before giving up. */
const HEAD_CHARS = 64 * 1024;
/** Characters of earlier reads kept, for an end mark and the last line's end split across reads: longer than the two together. */
const OVERLAP_CHARS = 64;

/** A count of one program's output in a terminal, from the moment `start` is called. */
export interface MarkedCount {
  start(): void;
  /** Characters that arrived since `start` (prompts and echoes included), as they arrive. */
  readonly seen: number;
  /** Once the end mark arrived: the characters from the first line's start to the last line's end, and the mark. */
  readonly done: Promise<{ chars: number; mark: RegExpExecArray }>;
}

/** Counts a program's output as it arrives, looking only at the start and the end, so the count costs the reader little. */
export function countMarked(output: OutputSource, marks: Marks): MarkedCount {
  let started = false;
  let seen = 0;
  let head = "";
  let inside = 0;
  let tail = "";
  let finished = false;
  let settle!: (result: { chars: number; mark: RegExpExecArray }) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<{ chars: number; mark: RegExpExecArray }>((resolve, reject) => ((settle = resolve), (fail = reject)));
  output((text) => {
    if (!started) return;
    seen += text.length;
    if (finished) return;
    if (inside === 0) {
      head += text;
      const at = head.indexOf(marks.firstLine);
      if (at < 0) {
        if (head.length > HEAD_CHARS) {
          finished = true;
          fail(new Error(`no output of the program in ${head.length} characters: ${JSON.stringify(head.slice(0, 200))}`));
        }
        return;
      }
      text = head.slice(at);
      head = "";
    }
    inside += text.length;
    const joined = tail + text;
    tail = text.length >= OVERLAP_CHARS ? text.slice(-OVERLAP_CHARS) : joined.slice(-OVERLAP_CHARS);
    const mark = marks.end.exec(joined);
    if (!mark) return;
    finished = true;
    // What follows the last line (the end mark, a prompt) is not the program's; no line end before the mark means bytes went missing.
    const lineEnd = joined.lastIndexOf(marks.lastLineEnd, mark.index);
    const ends = lineEnd < 0 ? mark.index : lineEnd + marks.lastLineEnd.length;
    settle({ chars: inside - (joined.length - ends), mark });
  });
  return {
    start: () => (started = true),
    get seen() {
      return seen;
    },
    done,
  };
}
