import type { Principal, Standing } from "./access.js";
import type { Grant } from "./grants.js";

/** The owner of the terminals the host opens itself (backends, `!` commands): no person's. */
export const HOST_OWNER = "host";

/** How far a person reaches a terminal: everything their grants allow, reading it only, or not at all. */
export type Reach = "full" | "read" | "none";

/** The owner a principal's new terminals are recorded with (a user's id cannot be mistaken for the token's holder or the host). */
export function ownerOf(principal: Principal): string {
  return principal.kind === "user" ? `user:${principal.id}` : "token-holder";
}

/** The owner label of the principal `principalId` names (`token-holder`, or a user's id). */
export function ownerOfId(id: string): string {
  return id === "token-holder" ? id : `user:${id}`;
}

/**
 * How far a principal reaches a terminal with this owner: their own terminals fully, the host's
 * for reading, every terminal with `terminal:others` (admins; the connection token's one holder).
 * A terminal with no recorded owner (adopted from a gateway that recorded none) is reached only
 * with `terminal:others`: it fails closed.
 */
export function reachOf(principal: Principal, standing: Standing, owner: string | undefined): Reach {
  if (standing.grants.has("terminal:others") || (owner !== undefined && owner === ownerOf(principal))) return "full";
  return owner === HOST_OWNER ? "read" : "none";
}

/** True when `reach` lets `grant` be used on the terminal: reading needs any reach, everything else full reach. */
export function reachAllows(reach: Reach, grant: Grant): boolean {
  return reach === "full" || (reach === "read" && grant === "terminal:output");
}

/** Which terminals a connection's root list shows: all of them, none (signed out), or those of one owner (and the host's). */
export type ListScope = { kind: "all" } | { kind: "none" } | { kind: "own"; owner: string };

/** The root list a principal may see: every terminal they reach at all. */
export function listScopeOf(principal: Principal | undefined, standing: Standing | undefined): ListScope {
  if (!principal || !standing) return { kind: "none" };
  return standing.grants.has("terminal:others") ? { kind: "all" } : { kind: "own", owner: ownerOf(principal) };
}

/** True when a root list of this scope shows a terminal with this owner. */
export function scopeLists(scope: ListScope, owner: string | undefined): boolean {
  if (scope.kind !== "own") return scope.kind === "all";
  return owner !== undefined && (owner === scope.owner || owner === HOST_OWNER);
}

/** True when two scopes show the same terminals. */
export function sameScope(a: ListScope, b: ListScope): boolean {
  return a.kind === b.kind && (a.kind !== "own" || a.owner === (b as { owner: string }).owner);
}
