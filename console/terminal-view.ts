import { FitAddon } from "@xterm/addon-fit";
import { SearchAddon } from "@xterm/addon-search";
import { WebLinksAddon } from "@xterm/addon-web-links";
import { Terminal } from "@xterm/xterm";
import type { TerminalContentPart } from "../ahp/types.js";
import type { RenderedScreen } from "./ahp-client.js";
import { CommandMarks } from "./command-marks.js";

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
/** How matches of a search are highlighted (xterm takes #RRGGBB only). */
const FIND_DECORATIONS = {
  matchBackground: "#515c6a",
  activeMatchBackground: "#a8741a",
  matchOverviewRuler: "#d186167e",
  activeMatchColorOverviewRuler: "#a0a0a0cc",
};

/** A terminal size in character cells. */
export interface CellSize {
  cols: number;
  rows: number;
}

/** What the screen tells the page. */
export interface TerminalViewEvents {
  /** Keys typed (or text pasted) into the terminal. */
  input(data: string): void;
  /** Where a search stands now. */
  findResult(result: FindResult): void;
  /** Ctrl+Shift+F was pressed in the terminal (Ctrl+F is the shell's). */
  findRequested(): void;
}

/** Where a search stands: the active match (0-based, -1 when there are too many to count) of how many. */
export interface FindResult {
  index: number;
  count: number;
}

/**
 * The screen of the terminal the page shows. It always has the terminal's own size (the one every
 * page shares), renders its output with a mark beside each command the shell reported, passes
 * keystrokes on, finds text, opens links, and says what size would fill the window.
 */
export class TerminalView {
  /** The xterm terminal itself (read-only use: the page exposes it for automation). */
  readonly term = new Terminal({
    cursorBlink: true,
    scrollback: 10_000,
    fontFamily: FONT_FAMILY,
    fontSize: FONT_SIZE_PX,
    lineHeight: LINE_HEIGHT,
    // Command marks and highlighted find results are decorations, which xterm still calls proposed API.
    allowProposedApi: true,
  });
  private readonly fit = new FitAddon();
  private readonly search = new SearchAddon();
  private readonly marks = new CommandMarks(this.term);

  constructor(element: HTMLElement, events: TerminalViewEvents) {
    this.term.loadAddon(this.fit);
    this.term.loadAddon(this.search);
    this.term.loadAddon(new WebLinksAddon());
    this.term.open(element);
    this.term.onData((data) => events.input(data));
    this.search.onDidChangeResults(({ resultIndex, resultCount }) => events.findResult({ index: resultIndex, count: resultCount }));
    this.term.attachCustomKeyEventHandler((event) => {
      const findKey = event.type === "keydown" && event.ctrlKey && event.shiftKey && event.code === "KeyF";
      if (findKey) {
        event.preventDefault();
        events.findRequested();
      }
      return !findKey;
    });
  }

  /** Starts over with a terminal's whole retained output at its size, its commands marked. */
  show(content: readonly TerminalContentPart[], size: Partial<CellSize>): void {
    this.marks.clear();
    this.term.reset();
    if (size.cols && size.rows) this.resize({ cols: size.cols, rows: size.rows });
    for (const part of content) {
      if (part.type === "unclassified") {
        this.term.write(part.value);
        continue;
      }
      this.commandStarted(part.commandId, part.commandLine);
      this.term.write(part.output);
      if (part.isComplete) this.commandFinished(part.commandId, part.exitCode);
    }
  }

  /**
   * Starts over with a terminal's screen as the gateway rendered it, its commands (found in `content`,
   * the snapshot's) marked where the screen says their lines are.
   */
  restore(screen: RenderedScreen, content: readonly TerminalContentPart[]): void {
    this.marks.clear();
    this.term.reset();
    this.resize(screen);
    this.term.write(screen.data, () => {
      const buffer = this.term.buffer.active;
      // Marks belong to the normal buffer's rows: a full-screen program's screen has none to show.
      if (buffer.type !== "normal") return;
      const cursorLine = buffer.baseY + buffer.cursorY;
      for (const { commandId, line } of screen.commands) {
        const command = content.find((part) => part.type === "command" && part.commandId === commandId);
        if (command?.type !== "command") continue;
        this.marks.started(commandId, command.commandLine, line - cursorLine);
        if (command.isComplete) this.marks.finished(commandId, command.exitCode);
      }
    });
  }

  /** Sends what is typed next to this terminal. */
  focus(): void {
    this.term.focus();
  }

  /** Renders more output. */
  write(data: string): void {
    this.term.write(data);
  }

  /** The shell started a command here (after the output written so far). */
  commandStarted(commandId: string, commandLine: string): void {
    this.term.write("", () => this.marks.started(commandId, commandLine));
  }

  /** The shell says a command ended. */
  commandFinished(commandId: string, exitCode: number | undefined): void {
    this.term.write("", () => this.marks.finished(commandId, exitCode));
  }

  /** Empties the scrollback and the screen but for the cursor's line, as a terminal's clear does. */
  clear(): void {
    this.term.clear();
  }

  /** Highlights every match of `text` and moves to the next one (`backwards`: the previous one). */
  find(text: string, backwards = false): void {
    if (!text) return this.search.clearDecorations();
    const options = { decorations: FIND_DECORATIONS };
    if (backwards) this.search.findPrevious(text, options);
    else this.search.findNext(text, options);
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
