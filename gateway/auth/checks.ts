import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import type { AccessPolicy, Principal } from "./access.js";
import type { Grant } from "./grants.js";
import { reachAllows, reachOf } from "./reach.js";

/** The terminal a check is about, by its recorded owner (undefined: none recorded). */
export interface TerminalInQuestion {
  owner: string | undefined;
}

/**
 * Why a principal may not do something (`grant`, or just act signed in when undefined; on
 * `terminal` when given), as the JSON-RPC error a request gets: -32007 with the resource to
 * authenticate against when nobody is signed in (or the user was removed, expired or their secret
 * rotated), -32009 naming the person and the grant when the role does not cover it, or the terminal
 * is another person's. Undefined when allowed.
 */
export function accessError(access: AccessPolicy, principal: Principal | undefined, grant: Grant | undefined, terminal?: TerminalInQuestion): JsonRpcError | undefined {
  const standing = principal && access.standing(principal);
  if (!standing) {
    return new JsonRpcError(ErrorCode.AuthRequired, `Sign in first: authenticate against ${access.resource.resource}`, { resources: [access.resource] });
  }
  if (grant && !standing.grants.has(grant)) return new JsonRpcError(ErrorCode.PermissionDenied, `${standing.name} may not do this: it needs ${grant}`);
  if (grant && terminal && !reachAllows(reachOf(principal, standing, terminal.owner), grant)) {
    const whose = terminal.owner === undefined ? "it belongs to nobody known" : "it belongs to another person";
    return new JsonRpcError(ErrorCode.PermissionDenied, `${standing.name} may not do this to that terminal: ${whose} (reaching it needs terminal:others)`);
  }
  return undefined;
}
