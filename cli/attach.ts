import { setTimeout as delay } from "node:timers/promises";
import { ErrorCode } from "../ahp/error-codes.js";
import { JsonRpcError } from "../ahp/json-rpc-error.js";
import { Backoff } from "../lib/backoff.js";
import type { ActionEnvelope } from "../ahp/types.js";
import { printable } from "../lib/unsafe-text.js";
import { AhpConnection, CliError, explain, type Target } from "./connection.js";
import { KeyReader } from "./key-reader.js";
import { exitStatusOf, type TerminalIo } from "./run.js";
import { resetKeepingScrollback, subscribeRestoring } from "./screen-restore.js";
import { resolveTerminal } from "./terminal-address.js";

/** Shortest pause before reconnecting: a gateway restarted by its supervisor is back within a second or two. */
const RECONNECT_MIN_MS = 250;
/** Longest pause between reconnect attempts: a gateway that stays down is not called in a tight loop, and is found within seconds once back. */
const RECONNECT_MAX_MS = 5_000;
/** Keys kept while the gateway is away, in characters: a paste's worth; beyond it they are dropped (and the user told). */
const MAX_HELD_KEYS = 64 * 1024;
/** Rows assumed when the output is not a terminal that says how many it has. */
const DEFAULT_ROWS = 24;
/**
 * Input modes a program in the terminal may have left on, turned off on the way out so this
 * terminal's own shell reads keys and the mouse as before: mouse reporting, bracketed paste,
 * application cursor keys and keypad; attributes reset and the cursor shown.
 */
const LOCAL_MODES_OFF = "\x1b[0m\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>";

/**
 * `ahp-term attach NAME`: the terminal (by URI, title or a unique prefix of its URI) in this one,
 * raw: its screen restored as it is now, keys go to it, its output comes here, a window resize is
 * passed on, Ctrl-] d detaches. When the gateway goes away it reconnects with backoff, saying so on
 * stderr, and keeps the keys typed meanwhile; back, it writes what it missed after what it showed
 * (from the runner offset it had, docs/ahp.md) or, when that is gone, restores the screen again. It
 * ends when the terminal exits or is gone. The local terminal is restored on every way out.
 */
export async function attach(target: Target, name: string, io: TerminalIo & { stdin: NodeJS.ReadStream }): Promise<number> {
  const { stdin, stdout, stderr } = io;
  let connection: AhpConnection | undefined = await AhpConnection.connect(target, { offsets: true });
  const uri = await resolveTerminal(connection, name).catch((err: unknown) => {
    connection?.close();
    throw err;
  });
  const wasRaw = stdin.isTTY ? stdin.isRaw : false;
  const restoreLocal = (): void => {
    if (stdin.isTTY) stdin.setRawMode(wasRaw);
  };
  process.once("exit", restoreLocal);
  let finished = false;
  let settle!: (status: number) => void;
  let fail!: (err: Error) => void;
  const done = new Promise<number>((resolve, reject) => ((settle = resolve), (fail = reject)));
  /** Ends the attachment once, saying `why` on stderr first (when given). */
  const finish = (status: number, why?: string): void => {
    if (finished) return;
    finished = true;
    if (why) stderr.write(`\r\n[${printable(uri)} ${why}]\r\n`);
    settle(status);
  };
  const onSignal = (): void => finish(130);
  process.once("SIGTERM", onSignal);
  process.once("SIGHUP", onSignal);
  const held: string[] = [];
  let heldChars = 0;
  const keys = new KeyReader((text) => {
    if (connection) return connection.dispatch(uri, { type: "terminal/input", data: text });
    if (heldChars + text.length > MAX_HELD_KEYS) return void stderr.write("\x07");
    held.push(text);
    heldChars += text.length;
  }, () => finish(0));
  const resize = (over = connection): void => {
    if (stdout.columns && stdout.rows) over?.dispatch(uri, { type: "terminal/resized", cols: stdout.columns, rows: stdout.rows });
  };
  const exited = (status: number): void => finish(status, "has exited");
  /** The runner offset where the output shown here ends; unknown after output that came without one. */
  let shownOffset: number | undefined;

  /** Shows the terminal over `using`: this size passed on, what it missed or the screen restored, held keys sent (before any typed later), output followed. */
  const follow = async (using: AhpConnection): Promise<void> => {
    resize(using);
    // Output can come in the same read as the reply to subscribe, before it is handled here: it waits for the snapshot.
    const early: ActionEnvelope[] = [];
    using.onAction = (envelope) => early.push(envelope);
    const { snapshot, drawing, resumed, fallback } = await subscribeRestoring(using, uri, shownOffset);
    if (!resumed) stdout.write(resetKeepingScrollback(stdout.rows || DEFAULT_ROWS));
    const lost: unknown = shownOffset === undefined || resumed ? undefined : snapshot._meta?.resumeUnavailable;
    if (typeof lost === "string") stderr.write(`[what came while away cannot be shown: ${printable(lost)}]\r\n`);
    // Said on the reset screen's first line: the transcript is drawn below it.
    if (fallback) stderr.write(`[no screen to restore: ${printable(fallback)}; the transcript follows]\r\n`);
    stdout.write(drawing);
    shownOffset = offsetIn(snapshot._meta);
    if (snapshot.state.lifecycle?.status === "exited") return exited(exitStatusOf(snapshot.state.lifecycle));
    if (held.length > 0) using.dispatch(uri, { type: "terminal/input", data: held.splice(0).join("") });
    heldChars = 0;
    connection = using;
    const show = ({ channel, action, _meta }: ActionEnvelope): void => {
      if (channel !== uri) return;
      if (action.type === "terminal/data") {
        stdout.write(action.data);
        shownOffset = offsetIn(_meta);
      }
      if (action.type === "terminal/exited") exited(exitStatusOf(action));
    };
    using.onAction = show;
    for (const envelope of early) if (envelope.serverSeq > snapshot.fromSeq) show(envelope);
    using.onClose = (code) => {
      if (finished || connection !== using) return;
      connection = undefined;
      stderr.write(`\r\n[the gateway closed the connection (${code}); reconnecting to ${printable(uri)}…]\r\n`);
      reconnect().catch(fail);
    };
  };

  const reconnect = async (): Promise<void> => {
    const backoff = new Backoff({ minMs: RECONNECT_MIN_MS, maxMs: RECONNECT_MAX_MS });
    while (!finished) {
      await delay(backoff.next());
      if (finished) return;
      let next: AhpConnection;
      try {
        next = await AhpConnection.connect(target, { offsets: true });
      } catch (err) {
        // A changed token will not come right by waiting; a gateway that is down or starting may.
        if (err instanceof CliError && /refused the connection token|user token/.test(err.message)) throw err;
        continue;
      }
      try {
        stderr.write(`[reconnected; restoring ${printable(uri)}]\r\n`);
        await follow(next);
        return;
      } catch (err) {
        next.close();
        // The terminal was disposed, or its runner lost it, while this client was away.
        if (err instanceof JsonRpcError && err.code === ErrorCode.NotFound) return finish(1, "is gone");
        if (err instanceof JsonRpcError) throw new CliError(err.message);
      }
    }
  };

  try {
    // The banner goes first, on a line of its own; the screen drawn after it resets this terminal.
    stderr.write(`[attached to ${printable(uri)}; detach with Ctrl-] d]\r\n`);
    await follow(connection).catch((err: unknown) => explain(err, uri));
    if (!finished) {
      if (stdin.isTTY) stdin.setRawMode(true);
      stdin.on("data", keys.read);
      stdin.resume();
      stdout.on("resize", resize);
    }
    const status = await done;
    stdout.write(LOCAL_MODES_OFF);
    if (keys.detached) stderr.write(`\r\n[detached from ${printable(uri)}]\r\n`);
    return status;
  } finally {
    finished = true;
    stdin.off("data", keys.read);
    stdin.pause();
    stdout.off("resize", resize);
    process.off("SIGTERM", onSignal);
    process.off("SIGHUP", onSignal);
    restoreLocal();
    connection?.close();
  }
}

/** The runner offset a snapshot's or an envelope's `_meta` gives, if any. */
function offsetIn(meta: Record<string, unknown> | undefined): number | undefined {
  return typeof meta?.offset === "number" ? meta.offset : undefined;
}
