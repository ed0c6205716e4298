import { randomUUID } from "node:crypto";
import { constants } from "node:os";
import { contentText } from "../ahp/content-text.js";
import { AhpConnection, explain, type Target } from "./connection.js";
import { terminalOptions } from "./manage.js";

/** What `run` and `attach` need of the process they run in. */
export interface TerminalIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
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
  const connection = await AhpConnection.open(target);
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
  try {
    const size = { cols: io.stdout.columns || 120, rows: io.stdout.rows || 40 };
    await connection
      .call("createTerminal", { channel: uri, ...terminalOptions({ name: argv[0], ...options }), ...size, _meta: { "ahp.argv": argv } })
      .catch((err: unknown) => explain(err));
    const { snapshot } = await connection.call("subscribe", { channel: uri });
    // Whatever the command printed before the subscription is in the snapshot; everything later arrives as actions.
    io.stdout.write(contentText(snapshot.state));
    if (snapshot.state.lifecycle?.status === "exited") exited(exitStatusOf(snapshot.state.lifecycle));
    const code = await status;
    await new Promise<void>((resolve) => (io.stdout.write("") ? resolve() : io.stdout.once("drain", () => resolve())));
    await connection.call("disposeTerminal", { channel: uri }).catch(() => undefined);
    return code;
  } finally {
    process.off("SIGINT", interrupt);
    connection.close();
  }
}
