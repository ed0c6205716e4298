/** What starts a `!` command in a chat message (advertised as `terminalCommandPrefix` by a host that serves terminals). */
export const TERMINAL_COMMAND_PREFIX = "!";

/** The shell line of a `!command` message, or undefined when the text is not one (a lone `!`, or `!` and spaces, goes to the agent as text). */
export function parseTerminalCommand(text: string): string | undefined {
  if (!text.startsWith(TERMINAL_COMMAND_PREFIX)) return undefined;
  const line = text.slice(TERMINAL_COMMAND_PREFIX.length);
  return line.trim() === "" ? undefined : line;
}
