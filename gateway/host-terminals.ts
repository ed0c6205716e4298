import { randomUUID } from "node:crypto";
import { basename, isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import type { TerminalClaim, TerminalLifecycle, Uri } from "./ahp/types.js";
import type { GatewayHost } from "./host.js";
import type { TerminalChannel } from "./terminal-channel.js";
import { TextStream } from "./text-stream.js";

/** What a backend asks for: a directory, a program (with `args`: run word by word; without: a shell line), and whose it is. */
export interface OpenTerminalOptions {
  /** A `file:` URI or an absolute path. */
  cwd: string;
  program: string;
  args?: string[];
  env?: Record<string, string>;
  claim: { session: Uri; chat: Uri; turnId?: string; toolCallId?: string };
  title?: string;
}

/** How a terminal's process ended: its exit code (128 after a signal) and the signal's name when one killed it. */
export interface TerminalExit {
  exitCode?: number;
  signal?: string;
}

/** A terminal a backend opened, and what it can do with it. */
export interface HostTerminalHandle {
  readonly uri: Uri;
  /** The output as text, the same stream a subscribed client reads, from the start. */
  readonly output: AsyncIterable<string>;
  /** Resolves once the process has exited and its output has drained. */
  readonly exited: Promise<TerminalExit>;
  write(text: string): Promise<void>;
  resize(cols: number, rows: number): Promise<void>;
  /** Sends a signal (SIGTERM by default) to the process group; the terminal stays listed. */
  kill(signal?: string): Promise<void>;
  /** Ends the process if it is still running and takes the terminal off the list. */
  release(): Promise<void>;
}

/** A terminal as a session's model sees it (`ahp_terminals`). */
export interface HostTerminalRow {
  uri: Uri;
  title: string;
  claim: TerminalClaim;
  lifecycle: TerminalLifecycle;
}

/** Size of terminals a backend opens. */
const BACKEND_TERMINAL_SIZE = { cols: 80, rows: 24 };

/**
 * The port through which an agent backend, in-process, opens terminals the host owns: channels on
 * the root list that clients can subscribe to, with URIs the host mints, run by the host's own
 * shell (never a connection's `defaultShell`).
 */
export class HostTerminals {
  constructor(
    private readonly host: GatewayHost,
    private readonly shell: string,
  ) {}

  /** Opens a terminal for a backend. */
  async open(options: OpenTerminalOptions): Promise<HostTerminalHandle> {
    const uri = `ahp-terminal:/${randomUUID()}`;
    const output = new TextStream();
    let finished!: (exit: TerminalExit) => void;
    const exited = new Promise<TerminalExit>((resolve) => (finished = resolve));
    const terminal = await this.host.createTerminal({
      uri,
      claim: { kind: "session", ...options.claim },
      name: options.title ?? basename(options.program),
      cwd: directoryOf(options.cwd),
      ...BACKEND_TERMINAL_SIZE,
      ...(options.args ? { argv: [options.program, ...options.args] } : { command: options.program, shell: this.shell }),
      env: options.env,
      watch(action) {
        if (action.type === "terminal/data") output.push(action.data);
        if (action.type === "terminal/exited") {
          output.end();
          finished(action.signal ? { exitCode: action.exitCode, signal: action.signal } : { exitCode: action.exitCode });
        }
      },
    });
    return this.handle(terminal, output, exited);
  }

  /** Every open terminal: URI, title, claim and lifecycle. */
  list(): HostTerminalRow[] {
    return this.host.terminalRows().map(({ resource, title, claim, lifecycle }) => ({
      uri: resource,
      title,
      claim,
      lifecycle: lifecycle ?? { status: "running" },
    }));
  }

  private handle(terminal: TerminalChannel, output: TextStream, exited: Promise<TerminalExit>): HostTerminalHandle {
    const { host } = this;
    const open = (doing: string): TerminalChannel => {
      if (host.terminalAt(terminal.uri) !== terminal) throw new Error(`cannot ${doing} ${terminal.uri}: it was released`);
      return terminal;
    };
    return {
      uri: terminal.uri,
      output,
      exited,
      async write(text) {
        if (!open("write to").running) throw new Error(`cannot write to ${terminal.uri}: its process has exited`);
        host.act(terminal, { type: "terminal/input", data: text });
      },
      async resize(cols, rows) {
        if (!open("resize").running) throw new Error(`cannot resize ${terminal.uri}: its process has exited`);
        host.act(terminal, { type: "terminal/resized", cols, rows });
      },
      async kill(signal = "SIGTERM") {
        if (open("kill").running) await host.signal(terminal, signal);
      },
      async release() {
        if (host.terminalAt(terminal.uri) === terminal) await host.disposeTerminal(terminal.uri);
      },
    };
  }
}

function directoryOf(cwd: string): string {
  if (cwd.startsWith("file:")) return fileURLToPath(cwd);
  if (isAbsolute(cwd)) return cwd;
  throw new Error(`cwd must be a file: URI or an absolute path, got "${cwd}"`);
}
