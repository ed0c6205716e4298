import type { Uri } from "../../ahp/types.js";
import type { HostTerminals } from "./host-terminals.js";

/** A `!` command typed in a turn, with where and for whom to run it. */
export interface TurnCommand {
  session: Uri;
  chat: Uri;
  turnId: string;
  toolCallId: string;
  /** The session's working directories (`file:` URIs or absolute paths); the command runs in the first. */
  workingDirectories: string[];
  line: string;
  /** The session's agent provider, named when it cannot run the command. */
  provider?: string;
}

/** What the finished tool call points at: the terminal, its output and how it ended. */
export interface TurnCommandResult {
  terminal: Uri;
  output: string;
  exitCode?: number;
  signal?: string;
}

/**
 * Runs a turn's `!` command in a terminal of its own (claimed by the session, chat, turn and tool
 * call, titled "Terminal") and resolves once it has exited and drained. It asks for no grant: it is
 * part of a turn, whose grant is the session layer's. Without terminals to run it in, the backend's
 * provider is named as unable to.
 */
export async function runTurnCommand(terminals: HostTerminals | undefined, command: TurnCommand, fallbackDirectory: string): Promise<TurnCommandResult> {
  if (!terminals) throw new Error(`${command.provider ?? "This host"} cannot run a command in a turn; use a terminal instead`);
  const handle = await terminals.open({
    cwd: command.workingDirectories[0] ?? fallbackDirectory,
    program: command.line,
    claim: { session: command.session, chat: command.chat, turnId: command.turnId, toolCallId: command.toolCallId },
    title: "Terminal",
  });
  let output = "";
  for await (const text of handle.output) output += text;
  return { terminal: handle.uri, output, ...(await handle.exited) };
}
