import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { Logger } from "../../../lib/logger.js";
import { PACKAGE_ROOT } from "../../../lib/package-root.js";
import { processStat } from "./process-group.js";

/** The sentinel's script stays beside the sources (the compiler does not copy it): found from the package root. */
export const HANGUP_SENTINEL_SCRIPT = join(PACKAGE_ROOT, "services", "runner", "process", "hangup-sentinel.sh");
/** A POSIX shell is all the sentinel needs; dash runs it in under 2 MB of memory. */
const SENTINEL_SHELL = "/bin/sh";
/** Pause before a new sentinel replaces one that died (only the runner's own account or root can kill it). */
const SENTINEL_RESTART_DELAY_MS = 1_000;

/** Which process groups are hung up should the runner die: the port pipe terminals report to. */
export interface HangupWatch {
  /** Hang this group up if the runner dies; its leader (pid = pgid) is alive and unreaped now. */
  watch(pgid: number): void;
  /** The group is gone: its number must never be signalled. */
  forget(pgid: number): void;
}

/**
 * Gives pipe terminals what a pseudoterminal's hangup gives pty terminals when the runner dies: a
 * small shell process (hangup-sentinel.sh), started on the first watch in a session of its own,
 * reads the groups to watch from a pipe only the runner holds; at end of input, however the runner
 * ended, it sends each group still listed SIGHUP and SIGCONT. It runs as the runner's account, so
 * terminals of other accounts can neither signal it nor close its pipe. One short line per terminal
 * start and end; nothing per byte of output.
 */
export class HangupSentinel implements HangupWatch {
  /** Watched groups and their leader's start time (0 when /proc could not say). */
  private readonly groups = new Map<number, number>();
  private child: ChildProcess | undefined;
  private restart: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly log: Logger,
    private readonly script = HANGUP_SENTINEL_SCRIPT,
  ) {}

  /** The sentinel's pid while one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  watch(pgid: number): void {
    const startTime = processStat(pgid)?.startTime ?? 0;
    this.groups.set(pgid, startTime);
    if (this.child) this.send(`+${pgid} ${startTime}\n`);
    else if (!this.closed && !this.restart) this.start();
  }

  forget(pgid: number): void {
    if (this.groups.delete(pgid)) this.send(`-${pgid}\n`);
  }

  /** Ends the sentinel's input, as the runner's exit would: it hangs up the groups still watched (none after every terminal closed) and exits. */
  close(): void {
    this.closed = true;
    clearTimeout(this.restart);
    this.child?.stdin!.end();
  }

  private send(line: string): void {
    if (!this.closed) this.child?.stdin!.write(line);
  }

  private start(): void {
    const child = spawn(SENTINEL_SHELL, [this.script], { stdio: ["pipe", "ignore", "inherit"], detached: true, cwd: "/" });
    this.child = child;
    // Its input fails with EPIPE once it is gone; its exit is handled below.
    child.stdin!.on("error", () => {});
    child.on("error", (err) => this.replace(child, { err }));
    child.on("exit", (code, signal) => this.replace(child, { code, signal }));
    // It must not keep an in-process runner's host alive; the runner's own server does that.
    child.unref();
    const watched = [...this.groups].map(([pgid, startTime]) => `+${pgid} ${startTime}\n`).join("");
    if (watched) child.stdin!.write(watched);
  }

  private replace(child: ChildProcess, why: Record<string, unknown>): void {
    if (this.child !== child) return;
    this.child = undefined;
    if (this.closed) return;
    this.log.error({ ...why, restartInMs: SENTINEL_RESTART_DELAY_MS }, "the hangup sentinel of pipe terminals stopped; starting another");
    this.restart = setTimeout(() => {
      this.restart = undefined;
      if (!this.closed && this.groups.size > 0) this.start();
    }, SENTINEL_RESTART_DELAY_MS);
    this.restart.unref();
  }
}
