const ESC = 0x1b;
const BACKSPACE = 0x08;
const DELETE = 0x7f;
const CTRL_C = 0x03;
const CTRL_U = 0x15;
const CTRL_W = 0x17;
const TAB = 0x09;
/** Longest line kept; anything longer is not a command line anyone will read back. */
const MAX_LINE_CHARS = 64 * 1024;

/**
 * Reads command lines back out of the bytes written to a shell, the way its line editor would
 * take them: backspace and delete remove a character, ^W a word, ^U and ^C the whole line; escape
 * sequences (arrow keys and the like) are skipped; a carriage return or newline ends a line.
 */
export class CommandLineReader {
  private readonly decoder = new TextDecoder("utf-8");
  private current: string[] = [];
  private readonly finished: string[] = [];
  private inEscape: "none" | "start" | "csi" = "none";

  /** Feeds bytes written to the terminal's input. */
  feed(data: Buffer): void {
    for (const char of this.decoder.decode(data, { stream: true })) this.take(char);
  }

  /** The oldest finished line, or what is typed so far when none is finished; the reader is then past it. */
  takeLine(): string {
    const finished = this.finished.shift();
    if (finished !== undefined) return finished;
    const line = this.current.join("");
    this.current = [];
    return line;
  }

  /** Drops the oldest finished line (a prompt read it and ran nothing: an empty line, a comment). */
  dropLine(): void {
    this.finished.shift();
  }

  /** The reader's position, to go back to with `rewind`. */
  mark(): { finished: number; current: string[] } {
    return { finished: this.finished.length, current: [...this.current] };
  }

  /** Forgets what was typed after `mark` (it went to the program that was running, not to the prompt). */
  rewind(to: { finished: number; current: string[] }): void {
    this.finished.length = Math.min(this.finished.length, to.finished);
    this.current = this.finished.length === to.finished ? to.current : [];
    this.inEscape = "none";
  }

  private take(char: string): void {
    const code = char.codePointAt(0)!;
    if (this.inEscape !== "none") return this.skipEscape(char, code);
    switch (code) {
      case ESC:
        this.inEscape = "start";
        return;
      case 0x0d:
      case 0x0a:
        this.finished.push(this.current.join(""));
        this.current = [];
        return;
      case BACKSPACE:
      case DELETE:
        this.current.pop();
        return;
      case CTRL_U:
      case CTRL_C:
        this.current = [];
        return;
      case CTRL_W:
        while (this.current.at(-1) === " ") this.current.pop();
        while (this.current.length > 0 && this.current.at(-1) !== " ") this.current.pop();
        return;
      default:
        if ((code < 0x20 && code !== TAB) || this.current.length >= MAX_LINE_CHARS) return;
        this.current.push(char);
    }
  }

  private skipEscape(char: string, code: number): void {
    if (this.inEscape === "start") {
      // ESC [ starts a control sequence; ESC O and other two-character escapes end here.
      this.inEscape = char === "[" ? "csi" : char === "O" ? "csi" : "none";
      return;
    }
    // A control sequence ends with a byte from @ to ~.
    if (code >= 0x40 && code <= 0x7e) this.inEscape = "none";
  }
}
