import { printable } from "../lib/unsafe-text.js";
import { CliError, type AhpConnection } from "./connection.js";

/** A terminal as the root channel lists it. */
export interface TerminalRow {
  resource: string;
  title: string;
  claim: { kind: string; clientId?: string; session?: string };
  lifecycle?: { status: string; exitCode?: number };
  exitCode?: number;
}

/** The terminals the root channel lists to this connection. */
export async function listTerminals(connection: AhpConnection): Promise<TerminalRow[]> {
  const { snapshot } = await connection.call("subscribe", { channel: "ahp-root://" });
  connection.unsubscribe("ahp-root://");
  return (snapshot.state.terminals ?? []) as TerminalRow[];
}

/**
 * The URI a command line names a terminal by: its URI, its title, or a unique prefix of its URI (with
 * or without the scheme, `ahp-terminal:/b12c` or `b12c`). A name that fits several terminals is an
 * error listing them; one that fits none is passed on as given (the gateway answers for it, and a
 * released terminal is not listed).
 */
export function terminalNamed(name: string, rows: readonly TerminalRow[]): string {
  if (rows.some((row) => row.resource === name)) return name;
  const titled = rows.filter((row) => row.title === name);
  const matches = titled.length > 0 ? titled : rows.filter((row) => row.resource.startsWith(name) || idOf(row.resource).startsWith(name));
  if (matches.length === 1) return matches[0]!.resource;
  if (matches.length === 0) return name;
  const listed = matches.map((row) => `  ${printable(row.resource)}\t${printable(row.title)}`).join("\n");
  throw new CliError(`"${printable(name)}" names ${matches.length} terminals; give more of the URI:\n${listed}`);
}

/** The part of a terminal URI after its scheme (and the slashes after it). */
function idOf(uri: string): string {
  return uri.replace(/^[a-z][a-z0-9+.-]*:\/*/i, "");
}

/** The terminal a command line names, looked up in the root list when it is not a URI listed there. */
export async function resolveTerminal(connection: AhpConnection, name: string): Promise<string> {
  if (name === "") throw new CliError("an empty terminal name");
  return terminalNamed(name, await listTerminals(connection));
}
