import { context, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { JsonRpcId } from "../../ahp/json-rpc.js";
import type { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { tracer } from "../../lib/rpc-spans.js";

/**
 * Starts the server span of one AHP request, named after its JSON-RPC method (pass "unknown" for a
 * method no handler serves, so clients cannot mint span names). A no-op span without a tracing SDK.
 */
export function startRequestSpan(method: string, id: JsonRpcId): Span {
  const span = tracer.startSpan(method, { kind: SpanKind.SERVER });
  if (span.isRecording()) {
    span.setAttributes({ "rpc.system": "jsonrpc", "rpc.method": method, "rpc.jsonrpc.version": "2.0", "rpc.jsonrpc.request_id": String(id) });
  }
  return span;
}

/** Runs `run` with `span` active, so the runner calls it makes become its children. */
export function inRequestSpan<T>(span: Span, run: () => T): T {
  return context.with(trace.setSpan(context.active(), span), run);
}

/** Ends a request span, as failed with the JSON-RPC error's code and message when the request was refused. */
export function endRequestSpan(span: Span, error?: JsonRpcError): void {
  if (error) {
    span.setAttributes({ "rpc.jsonrpc.error_code": error.code, "rpc.jsonrpc.error_message": error.message });
    span.setStatus({ code: SpanStatusCode.ERROR, message: `${error.code}: ${error.message}` });
  }
  span.end();
}
