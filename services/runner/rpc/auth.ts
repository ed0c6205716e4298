import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { sameSecret } from "../../../lib/same-secret.js";
import { REFLECTION_SERVICES } from "./reflection-service.js";

/** Which services beyond health may be called without the token. */
export interface AuthOptions {
  /** Serve reflection (the services' schema) without the token. */
  openReflection: boolean;
}

/**
 * Requires `Authorization: Bearer <token>` on every call except health checks (probes such as
 * Kubernetes' gRPC probe cannot send headers, and health reveals nothing) and, with
 * `openReflection`, reflection (it reveals the schema, which the repository publishes anyway).
 */
export function createBearerAuth(token: string, { openReflection }: AuthOptions = { openReflection: false }): Interceptor {
  const carriesToken = bearerTokenCheck(token);
  const open = new Set([Health.typeName, ...(openReflection ? REFLECTION_SERVICES.map((service) => service.typeName) : [])]);
  return (next) => async (request) => {
    if (!open.has(request.service.typeName)) {
      const authorization = request.header.get("authorization") ?? undefined;
      if (!carriesToken(authorization)) {
        throw new ConnectError(authorization === undefined ? "missing bearer token" : "wrong bearer token", Code.Unauthenticated);
      }
    }
    return next(request);
  };
}

/** Whether an Authorization header carries `Bearer <token>` (compared in constant time); with no token (`--insecure`) every header does. */
export function bearerTokenCheck(token: string | undefined): (authorization: string | undefined) => boolean {
  if (token === undefined) return () => true;
  const expected = `Bearer ${token}`;
  return (authorization) => sameSecret(authorization ?? "", expected);
}
