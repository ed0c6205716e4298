/** OSC numbers that carry shell integration: 133 (prompt and command marks), 633 (VS Code's), 7 (working directory). */
const SHELL_INTEGRATION_OSC = /^\x1b\](?:133|633|7);/;
/** The longest unfinished sequence held back between chunks; beyond it the text is let through as it is. */
const MAX_HELD_CHARS = 64 * 1024;

/**
 * Removes shell-integration sequences from terminal output text, which the protocol requires of
 * `terminal/data` and stored content (they become command actions instead). Fed chunk by chunk: a
 * sequence split across chunks is held back until it is complete, so nothing of it leaks. Every
 * other escape sequence, titles included, passes through untouched.
 */
export class ShellMarkFilter {
  private held = "";

  /** The text of the next chunk with shell-integration sequences removed. */
  filter(chunk: string): string {
    let text = this.held + chunk;
    this.held = "";
    let out = "";
    let from = 0;
    for (let start = text.indexOf("\x1b]", from); start >= 0; start = text.indexOf("\x1b]", from)) {
      const end = terminatorEnd(text, start + 2);
      if (end < 0) {
        const rest = text.slice(start);
        if (couldBeShellMark(rest) && rest.length <= MAX_HELD_CHARS) {
          this.held = rest;
          text = text.slice(0, start);
        }
        break;
      }
      if (SHELL_INTEGRATION_OSC.test(text.slice(start, start + 6))) {
        out += text.slice(from, start);
        from = end;
      } else {
        out += text.slice(from, end);
        from = end;
      }
    }
    // A lone ESC at the very end may be the start of a sequence the next chunk completes.
    if (!this.held && text.endsWith("\x1b") && from < text.length) {
      this.held = "\x1b";
      text = text.slice(0, -1);
    }
    return out + text.slice(from);
  }

  /** Whatever is held back (at exit: an unfinished sequence that will never complete). */
  flush(): string {
    const rest = this.held;
    this.held = "";
    return rest;
  }
}

/** Index just past the BEL or ESC \\ ending the OSC that starts before `from`, or -1 when not in `text` yet. */
function terminatorEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 0x07) return i + 1;
    if (char === 0x1b) return text[i + 1] === "\\" ? i + 2 : i + 1 < text.length ? i : -1;
  }
  return -1;
}

/** True when an unfinished OSC could still turn out to be a shell-integration sequence. */
function couldBeShellMark(partial: string): boolean {
  for (const prefix of ["\x1b]133;", "\x1b]633;", "\x1b]7;"]) {
    if (partial.length <= prefix.length ? prefix.startsWith(partial) : partial.startsWith(prefix)) return true;
  }
  return false;
}
