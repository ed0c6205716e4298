import { randomUUID } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { printable } from "../lib/unsafe-text.js";
import { TERMINAL_TYPE } from "../lib/terminal-type.js";
import { AhpConnection, explain, type Target } from "./connection.js";
import { listTerminals, resolveTerminal } from "./terminal-address.js";

/** `ahp-term ls`: every open terminal, one per line: URI, title, claim, state (each printable: what a program or client chose cannot start a line or move the cursor). */
export async function list(target: Target, out: (text: string) => void): Promise<number> {
  const connection = await AhpConnection.connect(target);
  try {
    for (const row of await listTerminals(connection)) {
      const claim = row.claim.kind === "client" ? `client:${row.claim.clientId}` : `session:${row.claim.session}`;
      const state = row.lifecycle?.status === "exited" ? `exited(${row.lifecycle.exitCode ?? "?"})` : "running";
      out(`${[row.resource, row.title, claim, state].map(printable).join("\t")}\n`);
    }
    return 0;
  } finally {
    connection.close();
  }
}

/** `ahp-term new [--cwd DIR] [--name NAME]`: opens a terminal and prints its URI. */
export async function create(target: Target, options: { cwd?: string; name?: string }, out: (text: string) => void): Promise<number> {
  const connection = await AhpConnection.connect(target);
  try {
    const uri = `ahp-terminal:/${randomUUID()}`;
    await connection.call("createTerminal", { channel: uri, ...terminalOptions(options, process.env) }).catch((err: unknown) => explain(err));
    out(`${uri}\n`);
    return 0;
  } finally {
    connection.close();
  }
}

/** `ahp-term rm NAME`: ends the terminal's process and removes it (NAME as `attach` takes it). */
export async function remove(target: Target, name: string): Promise<number> {
  const connection = await AhpConnection.connect(target);
  try {
    const uri = await resolveTerminal(connection, name);
    await connection.call("disposeTerminal", { channel: uri }).catch((err: unknown) => explain(err, uri));
    return 0;
  } finally {
    connection.close();
  }
}

/**
 * createTerminal's cwd and name from the CLI's options (a relative directory is taken from here),
 * and this terminal's type (`TERM`, as ssh passes it) in `_meta["ahp.term"]` when it is one.
 */
export function terminalOptions(options: { cwd?: string; name?: string }, env: NodeJS.ProcessEnv): Record<string, unknown> & { _meta: Record<string, unknown> } {
  const params: Record<string, unknown> & { _meta: Record<string, unknown> } = { _meta: {} };
  if (options.cwd) params.cwd = isAbsolute(options.cwd) ? options.cwd : resolve(options.cwd);
  if (options.name) params.name = options.name;
  if (env.TERM && TERMINAL_TYPE.test(env.TERM)) params._meta["ahp.term"] = env.TERM;
  return params;
}
