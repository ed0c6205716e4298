import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";

/**
 * Debian's and Ubuntu's default monospace first: Chromium on Linux does not know `ui-monospace` as a
 * generic family and may resolve it to a proportional font, so it comes after the named ones.
 */
const FONT_FAMILY = "'DejaVu Sans Mono', 'Liberation Mono', Menlo, Consolas, ui-monospace, monospace";
/** Text size in CSS pixels: the size VS Code's terminal uses on Linux. */
const FONT_SIZE_PX = 14;
/**
 * Row height as a multiple of the measured glyph height: at 1.0 DejaVu Sans Mono's underscore and
 * descenders (drawn below its measured box at 14 px) fall outside the row, which clips them.
 */
const LINE_HEIGHT = 1.2;

/** A terminal size in character cells. */
export interface CellSize {
  cols: number;
  rows: number;
}

/**
 * The screen of the terminal the page shows. It always has the terminal's own size (the one every
 * page shares), renders its output, passes keystrokes on, and says what size would fill the window.
 */
export class TerminalView {
  private readonly term = new Terminal({
    cursorBlink: true,
    scrollback: 10_000,
    fontFamily: FONT_FAMILY,
    fontSize: FONT_SIZE_PX,
    lineHeight: LINE_HEIGHT,
  });
  private readonly fit = new FitAddon();

  constructor(element: HTMLElement, onInput: (data: string) => void) {
    this.term.loadAddon(this.fit);
    this.term.open(element);
    this.term.onData(onInput);
  }

  /** Starts over with a terminal's whole retained output at its size. */
  show(text: string, size: Partial<CellSize>): void {
    this.term.reset();
    if (size.cols && size.rows) this.resize({ cols: size.cols, rows: size.rows });
    this.term.write(text);
  }

  /** Sends what is typed next to this terminal. */
  focus(): void {
    this.term.focus();
  }

  /** Renders more output. */
  write(data: string): void {
    this.term.write(data);
  }

  /** Empties the scrollback and the screen but for the cursor's line, as a terminal's clear does. */
  clear(): void {
    this.term.clear();
  }

  /** Takes the terminal's size (set by this page or another). */
  resize({ cols, rows }: CellSize): void {
    if (cols !== this.term.cols || rows !== this.term.rows) this.term.resize(cols, rows);
  }

  /** The size that would fill the window now, if the screen can be measured. */
  fittingSize(): CellSize | undefined {
    const proposed = this.fit.proposeDimensions();
    if (!proposed || !Number.isFinite(proposed.cols) || !Number.isFinite(proposed.rows)) return undefined;
    return { cols: Math.max(2, proposed.cols), rows: Math.max(1, proposed.rows) };
  }
}
