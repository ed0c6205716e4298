import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { emulate, screenCells } from "./emulated-screen.js";

const run = promisify(execFile);

/** A pane of a tmux server of its own (its own socket, no configuration read), running one command, as a user's terminal would. */
export class TmuxPane {
  private constructor(
    private readonly socket: string,
    readonly size: { cols: number; rows: number },
  ) {}

  /** Starts `command` (a shell line) in a detached session of `size`, with `env` added to the environment. */
  static async start(command: string, size: { cols: number; rows: number }, env: NodeJS.ProcessEnv = {}): Promise<TmuxPane> {
    const socket = `ahp-test-${process.pid}-${Math.random().toString(36).slice(2)}`;
    await run("tmux", ["-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", String(size.cols), "-y", String(size.rows), command], {
      env: { ...process.env, ...env },
    });
    // The pane keeps its size, whatever clients attach; it stays after the command ends, to be read.
    await run("tmux", ["-L", socket, "set-option", "-t", "main", "remain-on-exit", "on"]);
    return new TmuxPane(socket, size);
  }

  private tmux(...args: string[]): Promise<{ stdout: string }> {
    return run("tmux", ["-L", this.socket, ...args]);
  }

  /** Types `text` as keys (literally). */
  async type(text: string): Promise<void> {
    await this.tmux("send-keys", "-t", "main", "-l", text);
  }

  /** The pane's rows as `capture-pane -p -e -N` prints them: text with the escape sequences of its colours and attributes, trailing blanks kept (they may be coloured). */
  async capture(): Promise<string[]> {
    const { stdout } = await this.tmux("capture-pane", "-p", "-e", "-N", "-t", "main");
    return stdout.replace(/\n$/, "").split("\n");
  }

  /** The pane's cursor (0-based) and whether its program uses the alternate screen. */
  async cursor(): Promise<{ x: number; y: number; alternate: boolean }> {
    const { stdout } = await this.tmux("display-message", "-p", "-t", "main", "#{cursor_x} #{cursor_y} #{alternate_on}");
    const [x, y, alternate] = stdout.trim().split(" ").map(Number);
    return { x: x!, y: y!, alternate: alternate === 1 };
  }

  /** The pane cell by cell, as screenCells gives an emulator's screen (its rows, then the cursor and the active buffer). */
  async cells(): Promise<string[]> {
    const drawn = await emulate(this.size, [{ output: (await this.capture()).join("\r\n") }]);
    const { x, y, alternate } = await this.cursor();
    return [...screenCells(drawn).slice(0, -1), `cursor ${x},${y} in the ${alternate ? "alternate" : "normal"} buffer`];
  }

  /** The pane's text, one line per row without trailing blanks. */
  async text(): Promise<string> {
    const { stdout } = await this.tmux("capture-pane", "-p", "-t", "main");
    return stdout;
  }

  /** True while the pane's command runs. */
  async running(): Promise<boolean> {
    const { stdout } = await this.tmux("display-message", "-p", "-t", "main", "#{pane_dead}");
    return stdout.trim() !== "1";
  }

  /** The exit status of the pane's command once it ended. */
  async exitStatus(): Promise<number | undefined> {
    const { stdout } = await this.tmux("display-message", "-p", "-t", "main", "#{pane_dead_status}");
    return stdout.trim() === "" ? undefined : Number(stdout.trim());
  }

  /** Ends the tmux server and everything in it. */
  async kill(): Promise<void> {
    await this.tmux("kill-server").catch(() => undefined);
  }
}
