import xterm from "@xterm/headless";
import serialize from "@xterm/addon-serialize";
import type { ReadEvent } from "../log/output-log.js";

const { Terminal: Emulator } = xterm;
const { SerializeAddon } = serialize;
type Emulator = InstanceType<typeof Emulator>;

/** Where rendering starts: a size and what to write first (empty for a terminal's first byte), at an output offset. */
export interface ScreenBase {
  offset: number;
  cols: number;
  rows: number;
  data: string;
}

/** A command's place in a rendering: the row of the data holding the end of its command line. */
export interface ScreenCommand {
  commandId: string;
  line: number;
  exitCode?: number;
}

/** A rendered screen: what to write into a reset terminal of `cols` x `rows`, and where its commands stand. */
export interface Screen {
  data: string;
  cols: number;
  rows: number;
  endOffset: number;
  commands: ScreenCommand[];
}

/** Most scrollback lines a rendering carries: what the browser console keeps. */
export const MAX_SCREEN_SCROLLBACK_LINES = 10_000;
/** Largest rendering returned: scrollback is given up first, so a screen of many styled cells still fits a message. */
const MAX_SCREEN_CHARS = 4 * 1024 * 1024;
/** Output handed to the emulator per write: each write is parsed in one go, so larger pieces would hold the event loop longer. */
const WRITE_CHUNK_BYTES = 32 * 1024;

/** The cursor shapes DECSCUSR sets, by xterm's name, steady (blinking is one less). */
const CURSOR_SHAPES: Record<string, number> = { block: 2, underline: 4, bar: 6 };
/** The mouse encodings a program can turn on, by xterm's name. */
const MOUSE_ENCODINGS: Record<string, number> = { UTF8: 1005, SGR: 1006, URXVT: 1015, SGR_PIXELS: 1016 };

/**
 * Renders output as a terminal emulator (xterm's own, headless) shows it: `base` first, then the
 * events in order (output written, sizes applied where they changed, command marks placed at the
 * line a command was run from), and returns it serialized with up to `scrollbackLines` of history;
 * with `clear`, as a terminal's clear leaves it (the cursor's line at the top, nothing else). The
 * emulator parses in pieces between which other work runs.
 */
export async function renderScreen(base: ScreenBase, events: readonly ReadEvent[], endOffset: number, scrollbackLines: number, options: { clear?: boolean } = {}): Promise<Screen> {
  // The emulator keeps as much scrollback as a client does, whatever is returned: a narrowing resize
  // reflows the normal screen's lines into the scrollback, and with less room there the screen below
  // would come out otherwise than on the clients that followed the output.
  const term = new Emulator({ cols: base.cols, rows: base.rows, scrollback: MAX_SCREEN_SCROLLBACK_LINES, allowProposedApi: true });
  const write = (data: string | Uint8Array): Promise<void> => new Promise((resolve) => term.write(data, resolve));
  const marks = new Map<string, { marker: { line: number; isDisposed: boolean }; exitCode?: number }>();
  try {
    if (base.data) await write(base.data);
    for (const { event } of events) {
      if (event.kind === "output") {
        for (const part of event.parts) for (let at = 0; at < part.length; at += WRITE_CHUNK_BYTES) await write(part.subarray(at, at + WRITE_CHUNK_BYTES));
      } else if (event.kind === "resized") {
        term.resize(event.cols, event.rows);
      } else if (event.kind === "command_executed" && term.buffer.active.type === "normal") {
        // The shell marks a command when it starts running it, with the cursor on the line below the command line.
        const marker = term.registerMarker(-1);
        if (marker) marks.set(event.commandId, { marker });
      } else if (event.kind === "command_finished") {
        const mark = marks.get(event.commandId);
        if (mark) mark.exitCode = event.exitCode;
      }
    }
    if (options.clear) term.clear();
    trimToWidth(term);
    const addon = new SerializeAddon();
    term.loadAddon(addon as unknown as Parameters<Emulator["loadAddon"]>[0]);
    let lines = scrollbackLines;
    let data = addon.serialize({ scrollback: lines }) + stateAfterContent(term);
    if (data.length > MAX_SCREEN_CHARS) {
      lines = 0;
      data = addon.serialize({ scrollback: 0 }) + stateAfterContent(term);
    }
    const normal = term.buffer.normal;
    const firstRow = normal.length - Math.min(lines + term.rows, normal.length);
    const commands: ScreenCommand[] = [];
    for (const [commandId, { marker, exitCode }] of marks) {
      if (marker.isDisposed || marker.line < firstRow) continue;
      commands.push(exitCode === undefined ? { commandId, line: marker.line - firstRow } : { commandId, line: marker.line - firstRow, exitCode });
    }
    return { data, cols: term.cols, rows: term.rows, endOffset, commands };
  } finally {
    term.dispose();
  }
}

/**
 * What the serialize addon leaves out and a full-screen program relies on: the scroll region (with
 * the cursor put back where it was, as setting a region moves it), the cursor's shape and visibility,
 * the mouse encoding, the line-drawing character sets and the saved cursor (a program drawing a
 * border or a status line may be cut off in the middle of it). Read from the emulator's internals,
 * which the pinned version fixes.
 */
function stateAfterContent(term: Emulator): string {
  const core = (term as unknown as { _core: EmulatorCore })._core;
  const { scrollTop, scrollBottom, savedX, savedY } = core.buffer;
  const { cursorX, cursorY } = term.buffer.active;
  let state = "";
  // Saving moves nothing only when the cursor can be put back exactly: not in the pending wrap after the last column.
  if ((savedX !== 0 || savedY !== 0) && cursorX < term.cols && !core.coreService.decPrivateModes.origin) {
    state += `\x1b[${savedY + 1};${savedX + 1}H\x1b7\x1b[${cursorY + 1};${cursorX + 1}H`;
  }
  const charsets = core._charsetService;
  charsets._charsets.forEach((charset, level) => {
    if (charset && isLineDrawing(charset)) state += `\x1b${CHARSET_DESIGNATORS[level]}0`;
  });
  if (charsets.glevel !== 0) state += GL_SHIFTS[charsets.glevel] ?? "";
  if (scrollTop !== 0 || scrollBottom !== term.rows - 1) {
    state += `\x1b[${scrollTop + 1};${scrollBottom + 1}r`;
    // In origin mode the cursor is addressed from the top of the region.
    const row = core.coreService.decPrivateModes.origin ? cursorY - scrollTop : cursorY;
    state += `\x1b[${row + 1};${cursorX + 1}H`;
  }
  const { cursorStyle, cursorBlink } = core.coreService.decPrivateModes;
  const shape = cursorStyle === undefined ? undefined : CURSOR_SHAPES[cursorStyle];
  if (shape !== undefined) state += `\x1b[${cursorBlink ? shape - 1 : shape} q`;
  if (core.coreService.isCursorHidden) state += "\x1b[?25l";
  const encoding = MOUSE_ENCODINGS[core.coreMouseService.activeEncoding];
  if (encoding !== undefined) state += `\x1b[?${encoding}h`;
  return state;
}

/**
 * Cuts every line to the terminal's width. After a narrowing resize the emulator keeps the longer
 * lines of a buffer it does not reflow (the alternate one), and the serialize addon writes a line's
 * every cell, so it would wrap them into the rows below.
 */
function trimToWidth(term: Emulator): void {
  const core = (term as unknown as { _core: EmulatorCore })._core;
  for (const buffer of [core.buffers.normal, core.buffers.alt]) {
    for (let y = 0; y < buffer.lines.length; y++) {
      const line = buffer.lines.get(y);
      if (line && line.length > term.cols) line.resize(term.cols, buffer.getNullCell());
    }
  }
}

/** A buffer as the emulator holds it inside. */
interface CoreBuffer {
  lines: { length: number; get(y: number): { length: number; resize(cols: number, fill: unknown): void } | undefined };
  getNullCell(): unknown;
}

/** The intermediates that designate G0 to G3 (`ESC ( 0` puts the line-drawing set in G0). */
const CHARSET_DESIGNATORS = ["(", ")", "*", "+"];
/** Shifts that make G1 to G3 the active set (SO, LS2, LS3). */
const GL_SHIFTS: Record<number, string> = { 1: "\x0e", 2: "\x1bn", 3: "\x1bo" };

/** True for DEC's special graphics set, the only one programs still designate (to draw lines and borders). */
function isLineDrawing(charset: Record<string, string>): boolean {
  return charset.q === "\u2500" && charset.x === "\u2502";
}

/** The parts of the emulator's internals read above. */
interface EmulatorCore {
  _charsetService: { glevel: number; _charsets: Array<Record<string, string> | undefined> };
  buffers: { normal: CoreBuffer; alt: CoreBuffer };
  buffer: { scrollTop: number; scrollBottom: number; savedX: number; savedY: number };
  coreService: { isCursorHidden: boolean; decPrivateModes: { origin: boolean; cursorStyle?: string; cursorBlink?: boolean } };
  coreMouseService: { activeEncoding: string };
}
