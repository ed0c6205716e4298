import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { objectParams, stringField } from "./params.js";
import type { GatewayServices, Session } from "./session.js";

/**
 * `authenticate {resource, token}`: signs the connection in as the user the token belongs to; an
 * empty token signs it out. The resource must be the one the gateway advertises (-32602 otherwise);
 * a wrong token is -32007 again, listing the resource.
 */
export function authenticate(params: unknown, session: Session, { access, log }: GatewayServices): unknown {
  const p = objectParams(params, "authenticate");
  const resource = stringField(p, "resource", "authenticate");
  if (resource !== access.resource.resource) {
    throw new JsonRpcError(ErrorCode.InvalidParams, `Unknown resource ${resource}: this gateway authenticates against ${access.resource.resource}`);
  }
  if (typeof p.token !== "string") throw new JsonRpcError(ErrorCode.InvalidParams, 'authenticate needs a string "token"');
  if (p.token === "") {
    session.signIn(undefined);
    return {};
  }
  const principal = access.signIn(p.token);
  if (!principal) throw new JsonRpcError(ErrorCode.AuthRequired, "Wrong token", { resources: [access.resource] });
  session.signIn(principal);
  log.info({ clientId: session.clientId, user: principal.kind === "user" ? principal.id : "token-holder" }, "signed in");
  return {};
}
