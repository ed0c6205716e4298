import type { IDecoration, IMarker, Terminal } from "@xterm/xterm";

/** How a command's mark looks: running, finished with status 0, or failed. */
type CommandStatus = "running" | "succeeded" | "failed";

interface CommandMark {
  marker: IMarker;
  decoration: IDecoration | undefined;
  status: CommandStatus;
  title: string;
}

/**
 * A mark beside each command the shell reported (its command line's row), coloured by how the
 * command ended. Marks follow their rows as the screen scrolls and go when their rows leave the
 * scrollback.
 */
export class CommandMarks {
  private readonly marks = new Map<string, CommandMark>();

  constructor(private readonly term: Terminal) {}

  /**
   * A command started: call once the output written before it has been parsed. The cursor is then
   * at the start of the command's output, so its command line is the row above (`row`: another row,
   * counted from the cursor's).
   */
  started(commandId: string, commandLine: string, row = -1): void {
    const marker = this.term.registerMarker(row);
    if (!marker) return;
    const mark: CommandMark = { marker, decoration: undefined, status: "running", title: commandLine };
    this.marks.get(commandId)?.marker.dispose();
    this.marks.set(commandId, mark);
    marker.onDispose(() => {
      if (this.marks.get(commandId) === mark) this.marks.delete(commandId);
    });
    this.decorate(mark);
  }

  /** A command ended (`exitCode` undefined when the shell did not say). */
  finished(commandId: string, exitCode: number | undefined): void {
    const mark = this.marks.get(commandId);
    if (!mark) return;
    mark.status = exitCode === undefined || exitCode === 0 ? "succeeded" : "failed";
    mark.title = `${mark.title}\n${exitCode === undefined ? "finished" : `exit status ${exitCode}`}`;
    mark.decoration?.dispose();
    this.decorate(mark);
  }

  /** Forgets every mark (the screen starts over). */
  clear(): void {
    for (const mark of this.marks.values()) mark.marker.dispose();
    this.marks.clear();
  }

  private decorate(mark: CommandMark): void {
    mark.decoration = this.term.registerDecoration({ marker: mark.marker, width: 1 });
    mark.decoration?.onRender((element) => {
      element.classList.add("command-mark", mark.status);
      element.title = mark.title;
    });
  }
}
