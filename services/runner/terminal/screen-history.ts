import { RunnerError } from "../runner-error.js";
import { outputBytes, type OutputLog, type ReadEvent } from "../log/output-log.js";
import { MAX_SCREEN_SCROLLBACK_LINES, renderScreen, type Screen, type ScreenBase } from "./screen-render.js";

/** Screens rendered at once across the runner: each holds an emulator with its scrollback, and more at once would not finish sooner. */
const MAX_CONCURRENT_RENDERS = 2;

let rendering = 0;
const waitingRenders: Array<() => void> = [];

/**
 * What a terminal's screen is rendered from: the size it started at and, after a Clear, the screen
 * the clear left (rendered once, when the clear happened, as clients clear theirs). Rendering replays
 * the retained log from there, so it needs everything since: output evicted from retention makes the
 * screen unavailable, never guessed.
 */
export class ScreenHistory {
  private base: Promise<ScreenBase | undefined>;

  constructor(size: { cols: number; rows: number }) {
    this.base = Promise.resolve({ offset: 0, ...size, data: "" });
  }

  /** The log is about to be cleared at its end: the screen clients keep after a clear becomes the new start. */
  clearing(log: OutputLog): void {
    const end = log.endOffset;
    const start = log.startOffset;
    // Everything in the log came before the clear, a size change stamped at its end included.
    const events = eventsBetween(log, start, end, true);
    this.base = this.base
      .then(async (base) => {
        if (!base || base.offset !== start || !events) return undefined;
        const { data, cols, rows } = await limited(() => renderScreen(base, events, end, 0, { clear: true }));
        return { offset: end, cols, rows, data };
      })
      .catch(() => undefined);
  }

  /** The screen after the output before `endOffset` (and the events stamped there, with `eventsAtEnd`), with up to `scrollbackLines` of scrollback. */
  async render(log: OutputLog, endOffset: number, scrollbackLines: number, eventsAtEnd = false): Promise<Screen> {
    if (!Number.isInteger(scrollbackLines) || scrollbackLines < 0 || scrollbackLines > MAX_SCREEN_SCROLLBACK_LINES) {
      throw new RunnerError("invalid_argument", `scrollback_lines must be from 0 to ${MAX_SCREEN_SCROLLBACK_LINES}, got ${scrollbackLines}`);
    }
    if (endOffset > log.endOffset) throw new RunnerError("out_of_range", `offset ${endOffset} is past the end of the output (${log.endOffset})`);
    for (;;) {
      const pending = this.base;
      const base = await pending;
      // A clear came in meanwhile: start from the screen it left.
      if (pending !== this.base) continue;
      if (!base) throw unavailable("a Clear came after output that retention no longer held");
      if (endOffset < base.offset) throw unavailable(`the output before offset ${base.offset} was cleared`);
      const events = eventsBetween(log, base.offset, endOffset, eventsAtEnd);
      if (!events) throw unavailable(`the output before offset ${log.startOffset} is no longer retained`);
      return limited(() => renderScreen(base, events, endOffset, scrollbackLines));
    }
  }
}

/**
 * The log's events from `start` up to `end` (output cut there, events stamped at `end` left out
 * unless `atEnd`), read at once so eviction during the rendering changes nothing; undefined when
 * retention no longer holds `start`.
 */
function eventsBetween(log: OutputLog, start: number, end: number, atEnd = false): ReadEvent[] | undefined {
  if (log.startOffset > start) return undefined;
  const events: ReadEvent[] = [];
  let cursor = log.cursorAt(start);
  for (;;) {
    const read = log.read(cursor, log.retainLimit, false);
    if (read.gap) return undefined;
    if (read.events.length === 0) return events;
    for (const stamped of read.events) {
      const { event } = stamped;
      if (event.kind !== "output") {
        if (stamped.offset > end || (stamped.offset === end && !atEnd)) return events;
        events.push(stamped);
      } else if (stamped.offset < end) {
        events.push(event.end > end ? { offset: stamped.offset, event: { kind: "output", parts: [outputBytes(event).subarray(0, end - stamped.offset)], end } } : stamped);
      } else {
        return events;
      }
    }
    cursor = read.cursor;
  }
}

function unavailable(why: string): RunnerError {
  return new RunnerError("failed_precondition", `cannot render the screen: ${why}`);
}

/** Runs a rendering once fewer than MAX_CONCURRENT_RENDERS are running. */
async function limited<T>(render: () => Promise<T>): Promise<T> {
  if (rendering >= MAX_CONCURRENT_RENDERS) await new Promise<void>((resolve) => waitingRenders.push(resolve));
  else rendering++;
  try {
    return await render();
  } finally {
    const next = waitingRenders.shift();
    if (next) next();
    else rendering--;
  }
}
