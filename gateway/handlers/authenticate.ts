import { ErrorCode } from "../ahp/error-codes.js";
import type { Connection } from "../connection.js";
import { JsonRpcError } from "../json-rpc.js";
import { objectParams, stringField } from "./params.js";

/**
 * `authenticate {resource, token}`: signs the connection in as the user the token belongs to; an
 * empty token signs it out. The resource must be the one the gateway advertises (-32602 otherwise);
 * a wrong token is -32007 again, listing the resource.
 */
export function authenticate(params: unknown, connection: Connection): unknown {
  const p = objectParams(params, "authenticate");
  const { access } = connection.context;
  const resource = stringField(p, "resource", "authenticate");
  if (resource !== access.resource.resource) {
    throw new JsonRpcError(ErrorCode.InvalidParams, `Unknown resource ${resource}: this gateway authenticates against ${access.resource.resource}`);
  }
  if (typeof p.token !== "string") throw new JsonRpcError(ErrorCode.InvalidParams, 'authenticate needs a string "token"');
  if (p.token === "") {
    connection.principal = undefined;
    return {};
  }
  const principal = access.signIn(p.token);
  if (!principal) throw new JsonRpcError(ErrorCode.AuthRequired, "Wrong token", { resources: [access.resource] });
  connection.principal = principal;
  connection.context.log.info({ clientId: connection.clientId, user: principal.kind === "user" ? principal.id : "token-holder" }, "signed in");
  return {};
}
