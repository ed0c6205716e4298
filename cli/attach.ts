import { contentText } from "../ahp/content-text.js";
import { AhpConnection, CliError, explain, type Target } from "./connection.js";
import { exitStatusOf, type TerminalIo } from "./run.js";

/** Ctrl-], the first key of the detach sequence (Ctrl-] d), as telnet uses it. */
const DETACH_PREFIX = 0x1d;
const DETACH_KEY = 0x64;

/**
 * `ahp-term attach URI`: the terminal in this one, raw: keys go to it, its output comes here, a
 * window resize is passed on, Ctrl-] d detaches. The local terminal is restored on every way out.
 */
export async function attach(target: Target, uri: string, io: TerminalIo & { stdin: NodeJS.ReadStream }): Promise<number> {
  const connection = await AhpConnection.connect(target);
  const { stdin, stdout, stderr } = io;
  const wasRaw = stdin.isTTY ? stdin.isRaw : false;
  const restore = (): void => {
    if (stdin.isTTY) stdin.setRawMode(wasRaw);
  };
  process.once("exit", restore);
  let finish!: (status: number) => void;
  let fail!: (err: Error) => void;
  const done = new Promise<number>((resolve, reject) => ((finish = resolve), (fail = reject)));
  const onSignal = (): void => finish(130);
  process.once("SIGTERM", onSignal);
  process.once("SIGHUP", onSignal);
  const resize = (): void => {
    if (stdout.columns && stdout.rows) connection.dispatch(uri, { type: "terminal/resized", cols: stdout.columns, rows: stdout.rows });
  };
  const decoder = new TextDecoder("utf-8");
  let pendingPrefix = false;
  let detached = false;
  const onKeys = (chunk: Buffer): void => {
    const keys: number[] = [];
    for (const byte of chunk) {
      if (pendingPrefix) {
        pendingPrefix = false;
        if (byte === DETACH_KEY) {
          detached = true;
          break;
        }
        keys.push(DETACH_PREFIX);
      }
      if (byte === DETACH_PREFIX) pendingPrefix = true;
      else keys.push(byte);
    }
    // Keys typed before the detach in the same read still go to the terminal.
    const text = decoder.decode(Buffer.from(keys), { stream: true });
    if (text) connection.dispatch(uri, { type: "terminal/input", data: text });
    if (detached) finish(0);
  };
  try {
    const { snapshot } = await connection.call("subscribe", { channel: uri }).catch((err: unknown) => explain(err, uri));
    // The banner goes first, on a line of its own; the terminal's screen is redrawn below it.
    if (snapshot.state.lifecycle?.status !== "exited") stderr.write(`[attached to ${uri}; detach with Ctrl-] d]\r\n`);
    stdout.write(contentText(snapshot.state));
    if (snapshot.state.lifecycle?.status === "exited") {
      stderr.write(`\r\n[${uri} has exited]\r\n`);
      return exitStatusOf(snapshot.state.lifecycle);
    }
    connection.onAction = ({ channel, action }) => {
      if (channel !== uri) return;
      if (action.type === "terminal/data") stdout.write(action.data as string);
      if (action.type === "terminal/exited") finish(exitStatusOf(action));
    };
    connection.onClose = (code) => fail(new CliError(`the gateway closed the connection (${code})`));
    if (stdin.isTTY) stdin.setRawMode(true);
    stdin.on("data", onKeys);
    stdin.resume();
    stdout.on("resize", resize);
    resize();
    const status = await done;
    if (detached) stderr.write(`\r\n[detached from ${uri}]\r\n`);
    return status;
  } finally {
    stdin.off("data", onKeys);
    stdin.pause();
    stdout.off("resize", resize);
    process.off("SIGTERM", onSignal);
    process.off("SIGHUP", onSignal);
    restore();
    connection.close();
  }
}
