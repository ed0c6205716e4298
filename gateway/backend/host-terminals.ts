import { randomUUID } from "node:crypto";
import { basename, isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import type { TerminalClaim, TerminalLifecycle, Uri } from "../../ahp/types.js";
import { HOST_OWNER } from "../auth/reach.js";
import type { StateStore } from "../state/store.js";
import type { Dispatcher } from "../terminals/dispatch.js";
import type { OpenTerminals } from "../terminals/open-terminals.js";
import type { TerminalLink } from "../terminals/terminal-link.js";
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
 * shell (never a connection's `defaultShell`), as the Unix account the host names for them.
 */
export class HostTerminals {
  constructor(
    private readonly parts: { store: StateStore; terminals: OpenTerminals; dispatcher: Dispatcher },
    private readonly shell: string,
    /** The Unix account they run as; undefined: the services' own. */
    private readonly runAs?: string,
  ) {}

  /** Opens a terminal for a backend. */
  async open(options: OpenTerminalOptions): Promise<HostTerminalHandle> {
    const uri = `ahp-terminal:/${randomUUID()}`;
    const output = new TextStream();
    let finished!: (exit: TerminalExit) => void;
    const exited = new Promise<TerminalExit>((resolve) => (finished = resolve));
    const link = await this.parts.terminals.create({
      uri,
      claim: { kind: "session", ...options.claim },
      owner: HOST_OWNER,
      name: options.title ?? basename(options.program),
      cwd: directoryOf(options.cwd),
      ...BACKEND_TERMINAL_SIZE,
      ...(options.args ? { argv: [options.program, ...options.args] } : { command: options.program, shell: this.shell }),
      env: options.env,
      runAs: this.runAs,
      watch(action) {
        if (action.type === "terminal/data") output.push(action.data);
        if (action.type === "terminal/exited") {
          output.end();
          finished(action.signal ? { exitCode: action.exitCode, signal: action.signal } : { exitCode: action.exitCode });
        }
      },
    });
    return this.handle(link, output, exited);
  }

  /** Every open terminal: URI, title, claim and lifecycle. */
  list(): HostTerminalRow[] {
    return this.parts.store.terminalRows().map(({ resource, title, claim, lifecycle }) => ({
      uri: resource,
      title,
      claim,
      lifecycle: lifecycle ?? { status: "running" },
    }));
  }

  private handle(link: TerminalLink, output: TextStream, exited: Promise<TerminalExit>): HostTerminalHandle {
    const { store, terminals, dispatcher } = this.parts;
    const { uri } = link;
    const open = (doing: string): boolean => {
      if (terminals.linkAt(uri) !== link) throw new Error(`cannot ${doing} ${uri}: it was released`);
      return store.isRunning(uri);
    };
    return {
      uri,
      output,
      exited,
      async write(text) {
        if (!open("write to")) throw new Error(`cannot write to ${uri}: its process has exited`);
        dispatcher.act(link, { type: "terminal/input", data: text });
      },
      async resize(cols, rows) {
        if (!open("resize")) throw new Error(`cannot resize ${uri}: its process has exited`);
        dispatcher.act(link, { type: "terminal/resized", cols, rows });
      },
      async kill(signal = "SIGTERM") {
        if (open("kill")) await terminals.signal(link, signal);
      },
      async release() {
        if (terminals.linkAt(uri) === link) await terminals.dispose(uri);
      },
    };
  }
}

function directoryOf(cwd: string): string {
  if (cwd.startsWith("file:")) return fileURLToPath(cwd);
  if (isAbsolute(cwd)) return cwd;
  throw new Error(`cwd must be a file: URI or an absolute path, got "${cwd}"`);
}
