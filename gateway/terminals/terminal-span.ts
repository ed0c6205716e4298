import { SpanStatusCode } from "@opentelemetry/api";
import type { Uri } from "../../ahp/types.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { tracer } from "../../lib/rpc-spans.js";
import type { TerminalLink } from "./terminal-link.js";

/** The span of one terminal being created: its runner Spawn calls (one per runner tried) are its children. */
export const CREATE_TERMINAL_SPAN = "terminal.create";

/**
 * Runs `create` inside a span for the terminal at `uri`, which records the runner that took it, or
 * fails with the JSON-RPC code the request was refused with. A no-op span without a tracing SDK.
 */
export function inCreateTerminalSpan(uri: Uri, create: () => Promise<TerminalLink>): Promise<TerminalLink> {
  return tracer.startActiveSpan(CREATE_TERMINAL_SPAN, { attributes: { "ahp.terminal.uri": uri } }, async (span) => {
    try {
      const link = await create();
      span.setAttributes({ "ahp.runner.url": link.runner.url, "ahp.runner.terminal_id": link.runnerId });
      return link;
    } catch (err) {
      if (err instanceof JsonRpcError) span.setAttribute("rpc.jsonrpc.error_code", err.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}
