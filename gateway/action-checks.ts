import { ClaimError, parseClaim } from "./ahp/claims.js";
import type { RootAction, TerminalAction, TerminalClaim } from "./ahp/types.js";
import type { Peer } from "./channels.js";
import { claimChangeRefusal } from "./claim-policy.js";
import type { TerminalChannel } from "./terminal-channel.js";

/** Largest width or height a client may ask for (the runner's own limit). */
export const MAX_TERMINAL_DIMENSION = 2000;

/** The root action a client dispatched, checked and normalised, or the reason it is refused. */
export function checkRootAction(action: Record<string, unknown>): RootAction | string {
  if (action.type !== "root/configChanged") return `"${String(action.type)}" cannot be dispatched to the root channel`;
  const { config, replace } = action;
  if (typeof config !== "object" || config === null || Array.isArray(config)) return "root/configChanged needs a config object";
  if (replace !== undefined && typeof replace !== "boolean") return "replace must be a boolean";
  return replace === undefined ? { type: "root/configChanged", config: config as Record<string, unknown> } : { type: "root/configChanged", config: config as Record<string, unknown>, replace };
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
