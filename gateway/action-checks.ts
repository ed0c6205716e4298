import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { ClaimError, parseClaim } from "./ahp/claims.js";
import type { RootAction, TerminalAction, TerminalClaim } from "./ahp/types.js";
import type { Peer } from "./channels.js";
import { claimChangeRefusal } from "./claim-policy.js";
import type { TerminalChannel } from "./terminal-channel.js";

/** Largest width or height a client may ask for (the runner's own limit). */
export const MAX_TERMINAL_DIMENSION = 2000;

/** The root action a client dispatched, checked and normalised, or the reason it is refused. */
export function checkRootAction(action: Record<string, unknown>): Extract<RootAction, { type: "root/configChanged" }> | string {
  if (action.type !== "root/configChanged") return `"${String(action.type)}" cannot be dispatched to the root channel`;
  const { config, replace } = action;
  if (typeof config !== "object" || config === null || Array.isArray(config)) return "root/configChanged needs a config object";
  if (replace !== undefined && typeof replace !== "boolean") return "replace must be a boolean";
  const values = config as Record<string, unknown>;
  if (values.defaultShell !== undefined) {
    const refusal = shellRefusal(values.defaultShell);
    if (refusal) return refusal;
  }
  return replace === undefined ? { type: "root/configChanged", config: values } : { type: "root/configChanged", config: values, replace };
}

/** Why a defaultShell is refused: it must be an absolute path to an executable file (checked on the gateway's machine). */
function shellRefusal(shell: unknown): string | undefined {
  if (typeof shell !== "string" || !isAbsolute(shell)) return "defaultShell must be an absolute path";
  try {
    if (!statSync(shell).isFile()) return `defaultShell ${shell} is not a file`;
    accessSync(shell, constants.X_OK);
    return undefined;
  } catch {
    return `defaultShell ${shell} is not an executable file`;
  }
}

/**
 * The terminal action a client dispatched, checked and normalised (unknown keys dropped), or the
 * reason it is refused: payload shape, the terminal still running for input and resize, the claim rules.
 */
export function checkTerminalAction(terminal: TerminalChannel, action: Record<string, unknown>, peer: Peer): TerminalAction | string {
  switch (action.type) {
    case "terminal/input":
      if (typeof action.data !== "string") return "terminal/input needs a string data";
      if (!terminal.running) return "the terminal's process has exited";
      return { type: "terminal/input", data: action.data };
    case "terminal/resized": {
      const { cols, rows } = action;
      if (!isDimension(cols) || !isDimension(rows)) return `cols and rows must be integers from 1 to ${MAX_TERMINAL_DIMENSION}`;
      if (!terminal.running) return "the terminal's process has exited";
      return { type: "terminal/resized", cols, rows };
    }
    case "terminal/claimed": {
      let claim: TerminalClaim;
      try {
        claim = parseClaim(action.claim, { requireChat: peer.features.claimChat });
      } catch (err) {
        if (err instanceof ClaimError) return `invalid claim: ${err.message}`;
        throw err;
      }
      return claimChangeRefusal(terminal.state.claim, claim, peer.clientId) ?? { type: "terminal/claimed", claim };
    }
    case "terminal/titleChanged":
      return typeof action.title === "string" ? { type: "terminal/titleChanged", title: action.title } : "terminal/titleChanged needs a string title";
    case "terminal/cleared":
      return { type: "terminal/cleared" };
    default:
      return `"${String(action.type)}" cannot be dispatched to a terminal`;
  }
}

function isDimension(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_TERMINAL_DIMENSION;
}
