import { chownSync } from "node:fs";
import { createRequire } from "node:module";
import type { IPty } from "node-pty";
import { RunnerError } from "../runner-error.js";
import { drainFd } from "./fd-drain.js";
import { isCloseOnExec } from "./inheritable-descriptors.js";
import { createPtyInput, type QueuedWriter } from "./pty-input.js";
import { signalNameOf } from "./signals.js";
import { exitBySignal, type ProcessHandlers, type ProcessSpec, type TerminalProcess } from "./terminal-process.js";

type NodePty = typeof import("node-pty");

/** The end-of-file character (^D): on an empty line the line discipline turns it into end of input. */
const EOF_CHARACTER = 0x04;

let loaded: NodePty | null | undefined;

/** node-pty, or null when its native module cannot be loaded on this machine (then terminals run on pipes). */
function loadNodePty(): NodePty | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)("node-pty") as NodePty;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/** True when this runner can open pseudoterminals. */
export function ptyAvailable(): boolean {
  return loadNodePty() !== null;
}

/** The parts of node-pty's Unix terminal that its typings hide: the master's read stream, queued writer and descriptor. */
interface UnixTerminalInternals {
  _socket?: MasterStream;
  _writeStream?: QueuedWriter;
  _writable?: boolean;
  _fd?: number;
}

/** node-pty's read stream over the master. */
interface MasterStream {
  destroy: (...args: unknown[]) => unknown;
}

/** The internals the runner relies on, checked once at spawn. */
interface Master {
  socket: MasterStream;
  writer: QueuedWriter;
  fd: number;
}

/** node-pty's internals for a terminal it just spawned; a node-pty without them is refused (and the process ended) rather than half used. */
function masterOf(pty: IPty): Master {
  const { _socket: socket, _writeStream: writer, _writable: writable, _fd: fd } = pty as unknown as UnixTerminalInternals;
  if (socket && writer && writable === true && typeof fd === "number") return { socket, writer, fd };
  pty.kill("SIGKILL");
  throw new Error("unsupported node-pty version: its master's stream, writer or descriptor is missing");
}

/**
 * Refuses a terminal whose master is not close-on-exec (and ends its process): every process started
 * after it, in any terminal and as any account, would inherit the master and could read and type
 * into this terminal. node-pty 1.1.0 leaves it so unless patches/node-pty+1.1.0.patch was applied at
 * install; one small read of /proc/self/fdinfo tells.
 */
function refuseInheritableMaster(pty: IPty, fd: number): void {
  const closeOnExec = isCloseOnExec(fd);
  if (closeOnExec === true) return;
  pty.kill("SIGKILL");
  const why = closeOnExec === false ? "is not close-on-exec, so every later terminal would inherit it" : "cannot be checked for close-on-exec (/proc/self/fdinfo is unreadable)";
  throw new RunnerError(
    "failed_precondition",
    `refusing to open a pseudoterminal: node-pty's master ${why}; install with npm ci or npm install, which patch node-pty (patches/), or run npx patch-package && npm rebuild node-pty`,
  );
}

/**
 * Starts a process in a new pseudoterminal of the given size (set before exec; the child leads a
 * session of its own, so its pid is its process group id).
 */
export function spawnPty(spec: ProcessSpec, handlers: ProcessHandlers): TerminalProcess {
  const nodePty = loadNodePty();
  if (!nodePty) throw new Error("node-pty is not available");
  const pty: IPty = nodePty.spawn(spec.file, spec.args, {
    name: spec.env.TERM ?? "xterm-256color",
    cols: spec.cols,
    rows: spec.rows,
    cwd: spec.cwd,
    env: spec.env,
    encoding: null,
  });
  const master = masterOf(pty);
  refuseInheritableMaster(pty, master.fd);
  // As login does: the account owns its terminal, so programs that open it by name (pinentry, write) work; others still cannot.
  if (spec.runAs) chownSync((pty as unknown as { ptsName: string }).ptsName, spec.runAs.uid, -1);
  keepOutputTail(master, handlers.onData);
  // With `encoding: null` node-pty hands out Buffers, though its typings say string.
  pty.onData((data) => handlers.onData(data as unknown as Buffer));
  pty.onExit(({ exitCode, signal }) =>
    handlers.onExit(signal ? exitBySignal(signalNameOf(signal)) : { exitCode, signal: "" }),
  );
  const writeInput = createPtyInput({
    fd: master.fd,
    isOpen: () => (pty as unknown as UnixTerminalInternals)._writable === true,
    queued: master.writer,
    write: (data) => pty.write(data as unknown as string),
  });
  let lineOpen = false;
  const write = (data: Buffer): void => {
    writeInput(data);
    const last = data.at(-1);
    if (last !== undefined) lineOpen = last !== 0x0a && last !== 0x0d && last !== EOF_CHARACTER;
  };
  return {
    pid: pty.pid,
    isPty: true,
    write,
    // A ^D after unfinished input only hands that input over; a second one then ends input.
    endInput: () => write(Buffer.from(lineOpen ? [EOF_CHARACTER, EOF_CHARACTER] : [EOF_CHARACTER])),
    resize: (cols, rows) => pty.resize(cols, rows),
    pause: () => pty.pause(),
    resume: () => pty.resume(),
  };
}

/**
 * node-pty reads the master through libuv, which declares end of file when the other side hangs
 * up after a short read, although the kernel still holds output (node-pty issues #72 and #726: a
 * fast `seq 1 20000; echo END` loses its tail). node-pty reports the exit only after that stream
 * is destroyed, so reading the master dry just before the destroy keeps every byte and keeps the
 * exit after the last one.
 */
function keepOutputTail({ socket, fd }: Master, onData: (data: Buffer) => void): void {
  const destroy = socket.destroy.bind(socket);
  socket.destroy = (...args: unknown[]) => {
    socket.destroy = destroy;
    drainFd(fd, onData);
    return destroy(...args);
  };
}
