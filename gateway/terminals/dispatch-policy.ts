import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { ClaimError, parseClaim } from "../../ahp/claims.js";
import type { RootAction, TerminalAction, TerminalClaim } from "../../ahp/types.js";
import type { VersionFeatures } from "../../ahp/versions.js";
import type { Grant } from "../auth/grants.js";
import { claimChangeRefusal } from "./claim-policy.js";
import { isTerminalDimension, MAX_TERMINAL_DIMENSION } from "./terminal-size.js";
import { titleProblem } from "../../lib/titles.js";

/** What a check knows of the terminal an action is dispatched to, and of who dispatched it. */
export interface DispatchContext {
  running: boolean;
  claim: TerminalClaim;
  clientId: string;
  features: VersionFeatures;
}

/** The verdict of a check: the action normalised (unknown keys dropped), or the reason it is refused. */
type Verdict<T> = T | string;

/** How one client-dispatchable action type is handled: the channel kind it goes to, the grant it needs, and its check. */
type ActionRule =
  | { channel: "terminal"; grant: Grant; check(action: Record<string, unknown>, context: DispatchContext): Verdict<TerminalAction> }
  | { channel: "root"; check(action: Record<string, unknown>): Verdict<Extract<RootAction, { type: "root/configChanged" }>> };

/**
 * What clients may dispatch: the protocol's client-dispatchable actions, each with the grant it
 * needs (a root config change needs only a sign-in: it touches the connection's own values) and
 * the check of its payload and preconditions. Every other action type is the host's alone. The
 * allow-list, the grants and the checks are all read from this one table.
 */
export const DISPATCH_POLICY: Readonly<Record<string, ActionRule>> = {
  "terminal/input": {
    channel: "terminal",
    grant: "terminal:input",
    check: (action, { running }) => {
      if (typeof action.data !== "string") return "terminal/input needs a string data";
      if (!running) return "the terminal's process has exited";
      return { type: "terminal/input", data: action.data };
    },
  },
  "terminal/resized": {
    channel: "terminal",
    grant: "terminal:resize",
    check: ({ cols, rows }, { running }) => {
      if (!isTerminalDimension(cols) || !isTerminalDimension(rows)) return `cols and rows must be integers from 1 to ${MAX_TERMINAL_DIMENSION}`;
      if (!running) return "the terminal's process has exited";
      return { type: "terminal/resized", cols, rows };
    },
  },
  "terminal/claimed": {
    channel: "terminal",
    grant: "terminal:claim",
    check: (action, { claim: current, clientId, features }) => {
      let claim: TerminalClaim;
      try {
        claim = parseClaim(action.claim, { requireChat: features.claimChat });
      } catch (err) {
        if (err instanceof ClaimError) return `invalid claim: ${err.message}`;
        throw err;
      }
      return claimChangeRefusal(current, claim, clientId) ?? { type: "terminal/claimed", claim };
    },
  },
  "terminal/titleChanged": {
    channel: "terminal",
    grant: "terminal:rename",
    check: (action) => {
      if (typeof action.title !== "string") return "terminal/titleChanged needs a string title";
      return titleProblem(action.title) ?? { type: "terminal/titleChanged", title: action.title };
    },
  },
  "terminal/cleared": {
    channel: "terminal",
    grant: "terminal:clear",
    check: () => ({ type: "terminal/cleared" }),
  },
  "root/configChanged": {
    channel: "root",
    check: (action) => {
      const { config, replace } = action;
      if (typeof config !== "object" || config === null || Array.isArray(config)) return "root/configChanged needs a config object";
      if (replace !== undefined && typeof replace !== "boolean") return "replace must be a boolean";
      const values = config as Record<string, unknown>;
      if (values.defaultShell !== undefined) {
        const refusal = shellRefusal(values.defaultShell);
        if (refusal) return refusal;
      }
      return replace === undefined ? { type: "root/configChanged", config: values } : { type: "root/configChanged", config: values, replace };
    },
  },
};

/** The rule for an action type, when clients may dispatch it at all. */
export function dispatchRuleOf(type: string): ActionRule | undefined {
  return Object.hasOwn(DISPATCH_POLICY, type) ? DISPATCH_POLICY[type] : undefined;
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
