import type { Interceptor } from "@connectrpc/connect";
import { context, propagation, SpanKind, trace } from "@opentelemetry/api";
import { HEADERS_SETTER, isTraced, rpcSpanAttributes, rpcSpanName, tracedCall, tracer } from "../../lib/rpc-spans.js";

/**
 * An interceptor that gives every call to a runner a client span, child of whatever span is active
 * (the AHP request that caused it), and sends it to the runner as W3C `traceparent`. Without a
 * tracing SDK started (or for a call the sampler drops) it adds no span.
 */
export function runnerTraceInterceptor(): Interceptor {
  return (next) => (request) => {
    if (!isTraced(request)) return next(request);
    const parent = context.active();
    const span = tracer.startSpan(rpcSpanName(request), { kind: SpanKind.CLIENT }, parent);
    const traced = trace.setSpan(parent, span);
    propagation.inject(traced, request.header, HEADERS_SETTER);
    if (!span.isRecording()) return next(request);
    span.setAttributes(rpcSpanAttributes(request, "grpc"));
    return tracedCall(span, parent, "client", () => next(request));
  };
}
