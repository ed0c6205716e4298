import type { TerminalClaim } from "./types.js";

/** A claim that is not valid, with the reason for the client. */
export class ClaimError extends Error {}

/**
 * Reads a claim strictly: `kind` must be `client` (with a non-empty `clientId`) or `session` (with a
 * `session` URI, string `turnId`/`toolCallId` when present, and `chat` when the peer speaks 0.9).
 * Unknown keys are dropped.
 */
export function parseClaim(value: unknown, options: { requireChat: boolean }): TerminalClaim {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ClaimError("claim must be an object");
  const claim = value as Record<string, unknown>;
  if (claim.kind === "client") {
    if (typeof claim.clientId !== "string" || claim.clientId === "") throw new ClaimError("a client claim needs a non-empty clientId");
    return { kind: "client", clientId: claim.clientId };
  }
  if (claim.kind === "session") {
    if (typeof claim.session !== "string" || claim.session === "") throw new ClaimError("a session claim needs a session URI");
    const parsed: TerminalClaim = { kind: "session", session: claim.session };
    for (const key of ["chat", "turnId", "toolCallId"] as const) {
      if (claim[key] === undefined) continue;
      if (typeof claim[key] !== "string") throw new ClaimError(`${key} must be a string`);
      parsed[key] = claim[key];
    }
    if (options.requireChat && parsed.chat === undefined) throw new ClaimError("a session claim needs a chat URI (protocol 0.9)");
    return parsed;
  }
  throw new ClaimError(`claim kind must be "client" or "session", got ${JSON.stringify(claim.kind)}`);
}

/** True when two claims name the same holder and scope. */
export function sameClaim(a: TerminalClaim, b: TerminalClaim): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(claim: TerminalClaim): unknown[] {
  return claim.kind === "client"
    ? ["client", claim.clientId]
    : ["session", claim.session, claim.chat, claim.turnId, claim.toolCallId];
}
