import type { VersionFeatures } from "./versions.js";
import { ROOT_URI, type ActionEnvelope, type RootState, type StateAction, type TerminalClaim, type TerminalInfo, type TerminalState } from "./types.js";

/**
 * Turns the gateway's superset state into what one protocol version reads: the flat `exitCode`
 * for every version (0.9 peers get it beside `lifecycle`, which they require), `isPty` from 0.7,
 * and session claims with `chat` only from 0.9 (filled from the session when a pre-0.9 peer set it).
 */
export function shapeTerminalState(state: TerminalState, features: VersionFeatures): TerminalState {
  const shaped: TerminalState = { ...state, claim: shapeClaim(state.claim, features) };
  if (!features.isPty) delete shaped.isPty;
  if (features.lifecycle) shaped.lifecycle = state.lifecycle ?? { status: "running" };
  else delete shaped.lifecycle;
  return shaped;
}

/** A root-list row for one version. */
export function shapeTerminalInfo(info: TerminalInfo, features: VersionFeatures): TerminalInfo {
  const shaped: TerminalInfo = { ...info, claim: shapeClaim(info.claim, features) };
  if (features.lifecycle) shaped.lifecycle = info.lifecycle ?? { status: "running" };
  else delete shaped.lifecycle;
  return shaped;
}

/** The root state for one version. */
export function shapeRootState(state: RootState, features: VersionFeatures): RootState {
  return state.terminals ? { ...state, terminals: state.terminals.map((info) => shapeTerminalInfo(info, features)) } : state;
}

/** A claim for one version. */
export function shapeClaim(claim: TerminalClaim, features: VersionFeatures): TerminalClaim {
  if (claim.kind !== "session") return claim;
  if (features.claimChat) return claim.chat === undefined ? { ...claim, chat: claim.session } : claim;
  if (claim.chat === undefined) return claim;
  const { chat: _chat, ...withoutChat } = claim;
  return withoutChat;
}

/** True when an action's payload differs between versions (claims and root lists do; output does not). */
export function isVersionSensitive(action: StateAction): boolean {
  return action.type === "terminal/claimed" || action.type === "root/terminalsChanged";
}

/** An envelope for one version. */
export function shapeEnvelope(envelope: ActionEnvelope, features: VersionFeatures): ActionEnvelope {
  const { action } = envelope;
  if (action.type === "terminal/claimed") return { ...envelope, action: { ...action, claim: shapeClaim(action.claim, features) } };
  if (action.type === "root/terminalsChanged") {
    return { ...envelope, action: { ...action, terminals: action.terminals.map((info) => shapeTerminalInfo(info, features)) } };
  }
  return envelope;
}

/** The params of `auth/required` on the root channel for one version: the resource as metadata from 0.8, as its identifier before. */
export function authRequiredParams(resource: { resource: string }, reason: "required" | "expired", features: VersionFeatures): Record<string, unknown> {
  return { channel: ROOT_URI, resource: features.authRequiredMetadata ? resource : resource.resource, reason };
}
