import { isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import { ClaimError, parseClaim } from "../ahp/claims.js";
import { ErrorCode } from "../ahp/error-codes.js";
import type { TerminalClaim } from "../ahp/types.js";
import type { Connection } from "../connection.js";
import { MAX_TERMINAL_DIMENSION } from "../action-checks.js";
import { JsonRpcError } from "../json-rpc.js";
import { objectParams, optionalString, stringField } from "./params.js";

/** Size of a terminal whose creator names none. */
const DEFAULT_COLS = 80;
const DEFAULT_ROWS = 24;

/**
 * `createTerminal` (needs `terminal:create`): the client names the channel (any well-formed URI whose
 * scheme is not another AHP channel kind's); the claim defaults to this connection; `cwd` is a `file:`
 * URI or an absolute path; the shell is this connection's `defaultShell`, else the runner's. Returns
 * null once the terminal is listed.
 */
export async function createTerminal(params: unknown, connection: Connection): Promise<null> {
  connection.requireAccess("terminal:create");
  const p = objectParams(params, "createTerminal");
  const uri = terminalUri(stringField(p, "channel", "createTerminal"));
  const shell = connection.configValues.defaultShell;
  await connection.context.host.createTerminal({
    uri,
    shell: typeof shell === "string" ? shell : undefined,
    claim: p.claim === undefined ? { kind: "client", clientId: connection.clientId } : claimParam(p.claim, connection),
    name: optionalString(p, "name", "createTerminal"),
    cwd: directoryParam(optionalString(p, "cwd", "createTerminal")),
    cols: dimensionParam(p.cols, "cols", DEFAULT_COLS),
    rows: dimensionParam(p.rows, "rows", DEFAULT_ROWS),
  });
  return null;
}

/** `disposeTerminal` (needs `terminal:dispose`): ends the process and removes the terminal; -32008 for an unknown URI. */
export async function disposeTerminal(params: unknown, connection: Connection): Promise<null> {
  connection.requireAccess("terminal:dispose");
  const uri = stringField(objectParams(params, "disposeTerminal"), "channel", "disposeTerminal");
  await connection.context.host.disposeTerminal(uri);
  return null;
}

function terminalUri(value: string): string {
  let scheme: string;
  try {
    scheme = new URL(value).protocol.slice(0, -1);
  } catch {
    throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: "${value}" is not a well-formed URI`);
  }
  if (scheme.startsWith("ahp-") && scheme !== "ahp-terminal") {
    throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: the ${scheme}: scheme belongs to another kind of channel`);
  }
  return value;
}

function claimParam(value: unknown, connection: Connection): TerminalClaim {
  try {
    return parseClaim(value, { requireChat: connection.features.claimChat });
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
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > MAX_TERMINAL_DIMENSION) {
    throw new JsonRpcError(ErrorCode.InvalidParams, `createTerminal: ${name} must be an integer from 1 to ${MAX_TERMINAL_DIMENSION}`);
  }
  return value as number;
}
