import { Code, ConnectError } from "@connectrpc/connect";
import { context, SpanStatusCode, trace, type Context, type Span, type TextMapGetter, type TextMapSetter, type Tracer } from "@opentelemetry/api";

/** The name both processes trace under (the service name in the resource tells them apart). */
export const TRACER_NAME = "ahp-terminal-service";

/** The tracer both processes use: a no-op until the SDK is started. */
export const tracer: Tracer = trace.getTracer(TRACER_NAME);

/** Services whose calls are not traced: health checks come every few seconds, from the gateway and from orchestrators, and would bury the calls that matter. */
const UNTRACED_SERVICES: ReadonlySet<string> = new Set(["grpc.health.v1.Health"]);

/** Codes that are the server's fault: only these mark a server span as failed (OpenTelemetry's RPC conventions). */
const SERVER_FAULTS: ReadonlySet<number> = new Set<number>([Code.Unknown, Code.DeadlineExceeded, Code.Unimplemented, Code.Internal, Code.Unavailable, Code.DataLoss]);

/** The part of a Connect call a span is named and described from. */
export interface TracedCallInfo {
  service: { typeName: string };
  method: { name: string };
}

/** True when calls to this service get spans. */
export function isTraced(call: TracedCallInfo): boolean {
  return !UNTRACED_SERVICES.has(call.service.typeName);
}

/** The span name of an RPC: `package.Service/Method`, as OpenTelemetry's RPC conventions name it. */
export function rpcSpanName(call: TracedCallInfo): string {
  return `${call.service.typeName}/${call.method.name}`;
}

/** The attributes every RPC span carries; `system` is `grpc` or `connect_rpc`. */
export function rpcSpanAttributes(call: TracedCallInfo, system: string): Record<string, string> {
  return { "rpc.system": system, "rpc.service": call.service.typeName, "rpc.method": call.method.name };
}

/**
 * Runs `call` with `span` active in `parent` and ends the span with the call's code: at once for a
 * unary response, when its messages are done for a streamed one (the stream is handed on as is, with
 * no span or work per message beyond noticing its end). A server span counts only server faults as
 * errors; a client span every code but OK and CANCELED (the gateway cancels its own streams).
 */
export async function tracedCall<R extends { stream: boolean; message: unknown }>(span: Span, parent: Context, side: "server" | "client", call: () => Promise<R>): Promise<R> {
  const end = (err?: unknown): void => endRpcSpan(span, side, err);
  let response: R;
  try {
    response = await context.with(trace.setSpan(parent, span), call);
  } catch (err) {
    end(err);
    throw err;
  }
  if (!response.stream) {
    end();
    return response;
  }
  return { ...response, message: endedWith(response.message as AsyncIterable<unknown>, end) } as R;
}

function endRpcSpan(span: Span, side: "server" | "client", err: unknown): void {
  const code: number = err === undefined ? 0 : ConnectError.from(err).code;
  span.setAttribute("rpc.grpc.status_code", code);
  const failed = side === "server" ? SERVER_FAULTS.has(code) : code !== 0 && code !== Code.Canceled;
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: `${Code[code]}: ${ConnectError.from(err).rawMessage}` });
  span.end();
}

/** `messages` as they are, calling `end` once when they run out, fail (with the error) or are abandoned (CANCELED). */
function endedWith<T>(messages: AsyncIterable<T>, end: (err?: unknown) => void): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const inner = messages[Symbol.asyncIterator]();
      let open = true;
      const finish = (err?: unknown): void => {
        if (open) end(err);
        open = false;
      };
      return {
        next: (...args) =>
          inner.next(...args).then(
            (result) => {
              if (result.done) finish();
              return result;
            },
            (err: unknown) => {
              finish(err);
              throw err;
            },
          ),
        return: (value) => {
          finish(new ConnectError("the stream was abandoned", Code.Canceled));
          return inner.return ? inner.return(value) : Promise.resolve({ done: true, value: undefined });
        },
        throw: (err) => {
          finish(err);
          return inner.throw ? inner.throw(err) : Promise.reject(err);
        },
      };
    },
  };
}

/** Reads trace context (`traceparent`, `tracestate`) from a call's headers. */
export const HEADERS_GETTER: TextMapGetter<Headers> = {
  keys: (headers) => {
    // forEach, not keys(): where the DOM's Headers type is in scope it has no iterators.
    const names: string[] = [];
    headers.forEach((_value, name) => names.push(name));
    return names;
  },
  get: (headers, key) => headers.get(key) ?? undefined,
};

/** Writes trace context into a call's headers. */
export const HEADERS_SETTER: TextMapSetter<Headers> = {
  set: (headers, key, value) => headers.set(key, value),
};
