import { randomUUID } from "node:crypto";
import { constants } from "node:os";
import { contentText } from "../ahp/content-text.js";
import { AhpConnection, explain, type Target } from "./connection.js";
import { terminalOptions } from "./manage.js";

/** What `run` and `attach` need of the process they run in. */
export interface TerminalIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /** When it is a terminal, `run` passes its keys on (raw, as ssh -t does); otherwise only ^C is. */
  stdin?: NodeJS.ReadStream;
}

/** The exit status a shell reports for a terminal's end: its code, or 128 + the signal's number. */
export function exitStatusOf(action: Record<string, unknown>): number {
  if (typeof action.signal === "string") return 128 + ((constants.signals as Record<string, number>)[action.signal] ?? 0);
  return typeof action.exitCode === "number" ? action.exitCode : 1;
}

/**
 * `ahp-term run [--cwd DIR] -- CMD ARGS…`: runs the command word by word in a terminal of its own,
 * streams its output to stdout, forwards ^C, removes the terminal afterwards and resolves with the
 * command's exit status.
 */
export async function run(target: Target, options: { cwd?: string; name?: string }, argv: string[], io: TerminalIo): Promise<number> {
  const connection = await AhpConnection.connect(target);
  const uri = `ahp-terminal:/${randomUUID()}`;
  let exited!: (status: number) => void;
  const status = new Promise<number>((resolve) => (exited = resolve));
  connection.onAction = ({ channel, action }) => {
    if (channel !== uri) return;
    if (action.type === "terminal/data") io.stdout.write(action.data as string);
    if (action.type === "terminal/exited") exited(exitStatusOf(action));
  };
  connection.onClose = () => exited(255);
  const interrupt = (): void => connection.dispatch(uri, { type: "terminal/input", data: "\u0003" });
  process.on("SIGINT", interrupt);
  // From a terminal, keys (^C among them) go to the command's terminal untouched: the local line
  // discipline would otherwise echo ^C too, beside the command terminal's own echo.
  const keyboard = io.stdin?.isTTY ? io.stdin : undefined;
  const wasRaw = keyboard?.isRaw ?? false;
  const restore = (): void => void keyboard?.setRawMode(wasRaw);
  const decoder = new TextDecoder("utf-8");
  const onKeys = (chunk: Buffer): void => {
    const data = decoder.decode(chunk, { stream: true });
    if (data) connection.dispatch(uri, { type: "terminal/input", data });
  };
  try {
    const size = { cols: io.stdout.columns || 120, rows: io.stdout.rows || 40 };
    // Subscribing in the same breath: the gateway handles the two in order, before anything of the
    // process can arrive, so its exit (with the signal's name, which no snapshot carries) comes live.
    const params = terminalOptions({ name: argv[0], ...options }, process.env);
    const created = connection.call("createTerminal", { channel: uri, ...params, ...size, _meta: { ...params._meta, "ahp.argv": argv } });
    const subscribed = connection.call("subscribe", { channel: uri });
    await created.catch((err: unknown) => explain(err));
    const { snapshot } = await subscribed;
    // Whatever the command printed before the subscription is in the snapshot; everything later arrives as actions.
    io.stdout.write(contentText(snapshot.state));
    if (snapshot.state.lifecycle?.status === "exited") exited(exitStatusOf(snapshot.state.lifecycle));
    if (keyboard) {
      process.once("exit", restore);
      keyboard.setRawMode(true);
      keyboard.on("data", onKeys);
      keyboard.resume();
    }
    const code = await status;
    await new Promise<void>((resolve) => (io.stdout.write("") ? resolve() : io.stdout.once("drain", () => resolve())));
    await connection.call("disposeTerminal", { channel: uri }).catch(() => undefined);
    return code;
  } finally {
    process.off("SIGINT", interrupt);
    if (keyboard) {
      keyboard.off("data", onKeys);
      keyboard.pause();
      restore();
      process.off("exit", restore);
    }
    connection.close();
  }
}
