import { isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import { ClaimError, parseClaim } from "../../ahp/claims.js";
import { ErrorCode } from "../../ahp/error-codes.js";
import type { TerminalClaim } from "../../ahp/types.js";
import { principalId } from "../auth/access.js";
import { ownerOf } from "../auth/reach.js";
import { titleProblem } from "../../lib/titles.js";
import { TERMINAL_TYPE, TERMINAL_TYPE_RULE } from "../../lib/terminal-type.js";
import { uriProblem } from "../terminals/terminal-names.js";
import { isTerminalDimension, MAX_TERMINAL_DIMENSION } from "../terminals/terminal-size.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { objectParams, optionalString, stringField } from "./params.js";
import type { GatewayServices, Session } from "./session.js";

/** Size of a terminal whose creator names none. */
const DEFAULT_COLS = 80;
const DEFAULT_ROWS = 24;

/**
 * `createTerminal` (needs `terminal:create`): the client names the channel (a well-formed URI of a
 * scheme terminals use); the claim defaults to this connection; `cwd` is a `file:`
 * URI or an absolute path; the shell is this connection's `defaultShell` (checked again by the runner),
 * else the runner's; the process runs as the signed-in person's Unix account when they have one, and
 * the terminal is theirs (recorded in the runner's labels: only they, and holders of
 * `terminal:others`, reach it). A
 * URI over 2 KiB or with controls or whitespace, a name over 4 KiB, and a terminal past the
 * connection's or person's limit are refused. Returns null once the terminal is listed.
 */
export async function createTerminal(params: unknown, session: Session, { store, terminals, access, quota }: GatewayServices): Promise<null> {
  session.requireAccess("terminal:create");
  const p = objectParams(params, "createTerminal");
  const uri = terminalUri(stringField(p, "channel", "createTerminal"));
  const shell = store.configOf(session).defaultShell;
  const principal = session.principal!;
  const request = {
    uri,
    shell: typeof shell === "string" ? shell : undefined,
    // A defaultShell was named earlier and may have been swapped since: the runner checks it now, and runs what it checked.
    checkShell: typeof shell === "string",
    runAs: access.standing(principal)?.runAs,
    argv: argvParam(p._meta),
    term: termParam(p._meta),
    claim: p.claim === undefined ? { kind: "client" as const, clientId: session.clientId } : claimParam(p.claim, session),
    owner: ownerOf(principal),
    name: nameParam(optionalString(p, "name", "createTerminal")),
    cwd: directoryParam(optionalString(p, "cwd", "createTerminal")),
    cols: dimensionParam(p.cols, "cols", DEFAULT_COLS),
    rows: dimensionParam(p.rows, "rows", DEFAULT_ROWS),
  };
  const slot = quota.take(uri, { connection: session, user: principalId(principal) });
  if (typeof slot === "string") throw new JsonRpcError(ErrorCode.PermissionDenied, `createTerminal: ${slot}`);
  try {
    await terminals.create(request);
  } catch (err) {
    slot.failed();
    throw err;
  }
  slot.created();
  return null;
}

/** `disposeTerminal` (needs `terminal:dispose` and reach of that terminal): ends the process and removes the terminal; -32008 for an unknown URI. */
export async function disposeTerminal(params: unknown, session: Session, { terminals }: GatewayServices): Promise<null> {
  session.requireAccess("terminal:dispose");
  const uri = stringField(objectParams(params, "disposeTerminal"), "channel", "disposeTerminal");
  if (terminals.linkAt(uri)) session.requireAccess("terminal:dispose", uri);
  await terminals.dispose(uri);
  return null;
}

/**
 * An implementation-defined extension (0.8 allows `_meta` on every command): `_meta["ahp.argv"]`, a
 * program and its arguments to run word by word instead of a shell, as `ahp-term run` asks.
 */
function argvParam(meta: unknown): string[] | undefined {
  if (typeof meta !== "object" || meta === null || !("ahp.argv" in meta)) return undefined;
  const argv = (meta as Record<string, unknown>)["ahp.argv"];
  if (!Array.isArray(argv) || argv.length === 0 || argv.some((word) => typeof word !== "string") || argv[0] === "") {
    throw new JsonRpcError(ErrorCode.InvalidParams, 'createTerminal: _meta["ahp.argv"] must be a non-empty list of strings');
  }
  return argv as string[];
}

/**
 * `_meta["ahp.term"]`: the client's terminal type (its TERM, as ssh passes it), set in the terminal
 * when the runner's host describes it; `ahp-term new` and `run` send it.
 */
function termParam(meta: unknown): string | undefined {
  if (typeof meta !== "object" || meta === null || !("ahp.term" in meta)) return undefined;
  const term = (meta as Record<string, unknown>)["ahp.term"];
  if (typeof term !== "string" || !TERMINAL_TYPE.test(term)) throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: _meta["ahp.term"] must be ${TERMINAL_TYPE_RULE}`);
  return term;
}

function terminalUri(value: string): string {
  const problem = uriProblem(value);
  if (problem) throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: ${problem}`);
  try {
    new URL(value);
  } catch {
    throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: ${JSON.stringify(value)} is not a well-formed URI`);
  }
  return value;
}

function nameParam(value: string | undefined): string | undefined {
  const problem = value === undefined ? undefined : titleProblem(value);
  if (problem) throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: name: ${problem}`);
  return value;
}

function claimParam(value: unknown, session: Session): TerminalClaim {
  try {
    return parseClaim(value, { requireChat: session.features.claimChat });
  } catch (err) {
    if (err instanceof ClaimError) throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: invalid claim: ${err.message}`);
    throw err;
  }
}

function directoryParam(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (value.startsWith("file:")) {
    try {
      return fileURLToPath(value);
    } catch {
      throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: cwd "${value}" is not a usable file: URI`);
    }
  }
  if (isAbsolute(value)) return value;
  throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: cwd must be a file: URI or an absolute path, got "${value}"`);
}

function dimensionParam(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!isTerminalDimension(value)) {
    throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: ${name} must be an integer from 1 to ${MAX_TERMINAL_DIMENSION}`);
  }
  return value;
}
