import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import type { AccessPolicy, Principal } from "./access.js";
import type { Grant } from "./grants.js";

/**
 * Why a principal may not do something (`grant`, or just act signed in when undefined), as the
 * JSON-RPC error a request gets: -32007 with the resource to authenticate against when nobody is
 * signed in (or the user was removed or expired), -32009 naming the person and the grant when the
 * role does not cover it. Undefined when allowed.
 */
export function accessError(access: AccessPolicy, principal: Principal | undefined, grant: Grant | undefined): JsonRpcError | undefined {
  const standing = principal && access.standing(principal);
  if (!standing) {
    return new JsonRpcError(ErrorCode.AuthRequired, `Sign in first: authenticate against ${access.resource.resource}`, { resources: [access.resource] });
  }
  if (grant && !standing.grants.has(grant)) return new JsonRpcError(ErrorCode.PermissionDenied, `${standing.name} may not do this: it needs ${grant}`);
  return undefined;
}
