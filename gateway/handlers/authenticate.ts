import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { principalId } from "../auth/access.js";
import { objectParams, stringField } from "./params.js";
import type { GatewayServices, Session } from "./session.js";

/**
 * `authenticate {resource, token}`: signs the connection in as the user the token belongs to; an
 * empty token signs it out. The resource must be the one the gateway advertises (-32602 otherwise);
 * a wrong token is -32007 again, listing the resource. From 1.0, `expiresIn` (seconds) bounds the
 * sign-in: after it the connection is signed out again and told so (`auth/required`, reason `expired`).
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
  const lifetime = session.features.tokenLifetime ? lifetimeSeconds(p.expiresIn) : undefined;
  const principal = access.signIn(p.token);
  if (!principal) throw new JsonRpcError(ErrorCode.AuthRequired, "Wrong token", { resources: [access.resource] });
  session.signIn(principal, lifetime === undefined ? undefined : Date.now() + lifetime * 1000);
  log.info({ clientId: session.clientId, user: principalId(principal), expiresIn: lifetime }, "signed in");
  return {};
}

/** `expiresIn`: absent, or a positive number of seconds. */
function lifetimeSeconds(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new JsonRpcError(ErrorCode.InvalidParams, "authenticate: expiresIn must be a positive number of seconds");
  }
  return value;
}
