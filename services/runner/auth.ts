import { timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";

/**
 * Requires `Authorization: Bearer <token>` on every call except health checks (probes such as
 * Kubernetes' gRPC probe cannot send headers, and health reveals nothing).
 */
export function createBearerAuth(token: string): Interceptor {
  const expected = Buffer.from(`Bearer ${token}`);
  return (next) => async (request) => {
    if (request.service.typeName !== Health.typeName) {
      const given = Buffer.from(request.header.get("authorization") ?? "");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new ConnectError("missing or wrong bearer token", Code.Unauthenticated);
      }
    }
    return next(request);
  };
}
