import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { drainFd } from "./fd-drain.js";
import type { HangupWatch } from "./hangup-sentinel.js";
import { groupIsAlive, signalGroup } from "./signals.js";
import { exitBySignal, type ProcessExit, type ProcessHandlers, type ProcessSpec, type TerminalProcess } from "./terminal-process.js";

/** The ^C byte: on pipes there is no line discipline to turn it into SIGINT, so the runner does. */
const INTERRUPT_BYTE = 0x03;
/**
 * How long to wait for end of output once the process has exited (while its output is being
 * read). A descendant that keeps the pipes open (a background job) would otherwise hold the exit
 * back for as long as it lives.
 */
const OUTPUT_EOF_WAIT_MS = 200;
/**
 * How often a group whose first process has exited is checked for members left (one kill(2) each):
 * the hangup sentinel forgets it as soon as it is seen empty, so a group number the kernel hands
 * out again later than this can never be hung up by mistake.
 */
const LEFT_GROUP_CHECK_MS = 1_000;

/**
 * Starts a process on pipes in a new session (so it leads its own process group); stdout and stderr
 * both feed `onData`. Its group is watched by `hangup` until the group is gone, so it is hung up
 * should the runner die, as a pty's would be.
 */
export function spawnPipes(spec: ProcessSpec, handlers: ProcessHandlers, hangup: HangupWatch): TerminalProcess {
  const child = spawn(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  if (!child.stdin || !child.stdout || !child.stderr) {
    // Node could not make the pipes (no descriptors left), started nothing, and reports why on
    // 'error' once this returns: that event must not go unheard, or it would end the runner.
    child.once("error", () => {});
    throw Object.assign(new Error("cannot make pipes for the process: the runner is out of file descriptors"), { code: "EMFILE" });
  }
  const outputs = [child.stdout, child.stderr];
  // Flow control holds output back with pause(); Node resumes a child's output streams by itself
  // when the child exits (so they reach end of file), so a held stream is paused again after each chunk.
  let held = false;
  for (const stream of outputs) {
    stream.on("data", (data: Buffer) => {
      handlers.onData(data);
      if (held && !stream.isPaused()) stream.pause();
    });
  }
  child.stdin!.on("error", () => {
    // The process closed its input (EPIPE); what it did not read is lost, as with any pipe.
  });
  reportExitAfterOutput(child, outputs, handlers);
  const pid = child.pid ?? 0;
  if (pid > 0) {
    hangup.watch(pid);
    child.once("exit", () => forgetOnceGone(pid, hangup));
  }
  return {
    pid,
    isPty: false,
    write: (data) => writeWithInterrupts(child, pid, data),
    endInput: () => child.stdin!.end(),
    resize: () => {},
    pause: () => {
      held = true;
      outputs.forEach((stream) => stream.pause());
    },
    resume: () => {
      held = false;
      outputs.forEach((stream) => stream.resume());
    },
  };
}

/** Forgets the group once no process is left in it: now, or at a later check (background jobs may outlive the first process). */
function forgetOnceGone(pgid: number, hangup: HangupWatch): void {
  if (!groupExists(pgid)) return hangup.forget(pgid);
  const check = setInterval(() => {
    if (groupExists(pgid)) return;
    clearInterval(check);
    hangup.forget(pgid);
  }, LEFT_GROUP_CHECK_MS);
  check.unref();
}

/** True while any process is in the group; one it may not signal (EPERM) still counts. */
function groupExists(pgid: number): boolean {
  try {
    return groupIsAlive(pgid);
  } catch {
    return true;
  }
}

function writeWithInterrupts(child: ChildProcess, pgid: number, data: Buffer): void {
  let from = 0;
  for (let at = data.indexOf(INTERRUPT_BYTE); at >= 0; at = data.indexOf(INTERRUPT_BYTE, from)) {
    if (at > from) child.stdin!.write(data.subarray(from, at));
    signalGroup(pgid, "SIGINT");
    from = at + 1;
  }
  if (from < data.length) child.stdin!.write(from === 0 ? data : data.subarray(from));
}

function reportExitAfterOutput(child: ChildProcess, outputs: Readable[], handlers: ProcessHandlers): void {
  let exit: ProcessExit | undefined;
  let reported = false;
  let eofWait: NodeJS.Timeout | undefined;
  const report = (): void => {
    if (reported || !exit) return;
    reported = true;
    clearTimeout(eofWait);
    handlers.onExit(exit);
  };
  child.on("error", (err: NodeJS.ErrnoException) => {
    exit ??= { exitCode: err.code === "EACCES" ? 126 : 127, signal: "" };
    handlers.onData(Buffer.from(`cannot start ${child.spawnfile}: ${err.message}\n`));
    report();
  });
  child.on("close", report);
  const giveUpOnEof = (): void => {
    // Output held back by flow control is not late output: wait until it is being read again (as
    // under a pty, the exit follows the last byte). Only output that stops coming while it is read
    // counts as held by a descendant.
    if (outputs.some((stream) => stream.isPaused() && !stream.destroyed)) {
      eofWait = setTimeout(giveUpOnEof, OUTPUT_EOF_WAIT_MS);
      return;
    }
    for (const stream of outputs) {
      const fd = (stream as unknown as { _handle?: { fd?: number } })._handle?.fd;
      if (typeof fd === "number" && fd >= 0) drainFd(fd, handlers.onData);
      stream.destroy();
    }
    report();
  };
  child.on("exit", (code, signal) => {
    exit = signal ? exitBySignal(signal) : { exitCode: code ?? 0, signal: "" };
    eofWait = setTimeout(giveUpOnEof, OUTPUT_EOF_WAIT_MS);
  });
}
