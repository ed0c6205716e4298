import type { Interceptor } from "@connectrpc/connect";
import { propagation, ROOT_CONTEXT, SpanKind } from "@opentelemetry/api";
import { HEADERS_GETTER, isTraced, rpcSpanAttributes, rpcSpanName, tracedCall, tracer } from "../../../lib/rpc-spans.js";

/**
 * An interceptor that gives every RPC a server span named after its method, continuing the trace
 * of any caller that sends W3C `traceparent`. Without a tracing SDK started (or for a call the
 * sampler drops) it only passes the call on.
 */
export function traceInterceptor(): Interceptor {
  return (next) => (request) => {
    if (!isTraced(request)) return next(request);
    const parent = propagation.extract(ROOT_CONTEXT, request.header, HEADERS_GETTER);
    const span = tracer.startSpan(rpcSpanName(request), { kind: SpanKind.SERVER }, parent);
    if (!span.isRecording()) return next(request);
    // gRPC and gRPC-Web both say application/grpc…; everything else here is the Connect protocol.
    const system = request.header.get("content-type")?.startsWith("application/grpc") ? "grpc" : "connect_rpc";
    span.setAttributes(rpcSpanAttributes(request, system));
    return tracedCall(span, parent, "server", () => next(request));
  };
}
