import type { Interceptor } from "@connectrpc/connect";
import { GRPC_OK, grpcCodeNameOf } from "../../../lib/grpc-code-names.js";
import type { RunnerMetrics } from "../metrics.js";

/** An interceptor that counts every RPC by method and final code, and times unary ones. */
export function metricsInterceptor(metrics: RunnerMetrics): Interceptor {
  return (next) => async (request) => {
    const method = request.method.name;
    const stopTimer = request.stream ? undefined : metrics.rpcSeconds.startTimer({ method });
    try {
      const response = await next(request);
      // A server stream (Attach) has only begun here: it is counted when it ends.
      if (response.stream) return { ...response, message: countedWhenDone(metrics, method, response.message) };
      metrics.rpcs.inc({ method, code: GRPC_OK });
      return response;
    } catch (err) {
      metrics.rpcs.inc({ method, code: grpcCodeNameOf(err) });
      throw err;
    } finally {
      stopTimer?.();
    }
  };
}

async function* countedWhenDone<T>(metrics: RunnerMetrics, method: string, messages: AsyncIterable<T>): AsyncIterable<T> {
  let code = GRPC_OK;
  try {
    yield* messages;
  } catch (err) {
    code = grpcCodeNameOf(err);
    throw err;
  } finally {
    metrics.rpcs.inc({ method, code });
  }
}
