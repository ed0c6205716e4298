import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { sameSecret } from "../../lib/same-secret.js";

/**
 * Requires `Authorization: Bearer <token>` on every call except health checks (probes such as
 * Kubernetes' gRPC probe cannot send headers, and health reveals nothing).
 */
export function createBearerAuth(token: string): Interceptor {
  const expected = `Bearer ${token}`;
  return (next) => async (request) => {
    if (request.service.typeName !== Health.typeName) {
      if (!sameSecret(request.header.get("authorization") ?? "", expected)) {
        throw new ConnectError("missing or wrong bearer token", Code.Unauthenticated);
      }
    }
    return next(request);
  };
}
