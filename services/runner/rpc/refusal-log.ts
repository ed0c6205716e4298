import { Code, ConnectError, createContextKey, createContextValues, type ContextValues, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../../../lib/logger.js";
import { RateLimitedLog } from "../../../lib/rate-limited-log.js";

/** The remote address of the connection a call came on (undefined when the socket no longer knows it). */
export const PEER_ADDRESS = createContextKey<string | undefined>(undefined, { description: "the caller's remote address" });

/** The context values a call starts with: its caller's address, for the refusal log. */
export function peerContextValues(request: { socket: { remoteAddress?: string } }): ContextValues {
  return createContextValues().set(PEER_ADDRESS, request.socket.remoteAddress);
}

/** What a refused call is logged as, per code: a caller without the token, or asking for what it may not. */
const REFUSALS: ReadonlyMap<Code, string> = new Map([
  [Code.Unauthenticated, "refused a call: missing or wrong bearer token"],
  [Code.PermissionDenied, "refused a call the caller may not make"],
]);

/**
 * Logs refused calls (a wrong or missing token, a permission denial) at warn with the caller's
 * address, the RPC and the reason, at most one line per kind every 10 s so a flood of bad tokens
 * cannot fill a disk. Placed before the bearer check, so it sees that check's refusals.
 */
export function refusalLogInterceptor(log: Logger): Interceptor {
  const warnings = new RateLimitedLog(log);
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (err) {
      const refusal = err instanceof ConnectError ? REFUSALS.get(err.code) : undefined;
      if (refusal) {
        const reason = (err as ConnectError).rawMessage;
        warnings.warn(refusal, { address: request.contextValues.get(PEER_ADDRESS), rpc: `${request.service.typeName}/${request.method.name}`, reason }, refusal);
      }
      throw err;
    }
  };
}
