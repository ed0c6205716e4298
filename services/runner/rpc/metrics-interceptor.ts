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

/**
 * `messages`, counted by their call's final code once they end or fail, or once they are abandoned
 * (the caller went away: counted OK, as nothing failed). A wrapper rather than a generator: each
 * answer of every server stream passes it, and a generator's `yield*` costs each one several promise
 * turns more. An error thrown in (connect's way of stopping a stream) goes to the messages, as
 * `yield*` would send it, so their implementation's cleanup runs; what comes out is what is counted.
 */
function countedWhenDone<T>(metrics: RunnerMetrics, method: string, messages: AsyncIterable<T>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const it = messages[Symbol.asyncIterator]();
      let counted = false;
      const count = (code: string): void => {
        if (counted) return;
        counted = true;
        metrics.rpcs.inc({ method, code });
      };
      const counting = (step: Promise<IteratorResult<T>>): Promise<IteratorResult<T>> =>
        step.then(
          (result) => {
            if (result.done) count(GRPC_OK);
            return result;
          },
          (err: unknown) => {
            count(grpcCodeNameOf(err));
            throw err;
          },
        );
      return {
        next: () => counting(it.next()),
        return: (value?: unknown) => {
          count(GRPC_OK);
          return it.return ? it.return(value) : Promise.resolve({ value: value as T, done: true as const });
        },
        throw: (err: unknown) => {
          if (it.throw) return counting(it.throw(err));
          // Messages that cannot take an error are closed, as `yield*` closes them, and the error goes on.
          return counting(Promise.resolve(it.return?.()).then(() => Promise.reject(err)));
        },
      };
    },
  };
}
