import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../../lib/logger.js";
import { RunnerError, type RunnerErrorKind } from "../runner-error.js";

/** The one table from the runner's refusals to RPC codes. */
const CODE_OF_KIND: Record<RunnerErrorKind, Code> = {
  not_found: Code.NotFound,
  invalid_argument: Code.InvalidArgument,
  failed_precondition: Code.FailedPrecondition,
  already_exists: Code.AlreadyExists,
  aborted: Code.Aborted,
  resource_exhausted: Code.ResourceExhausted,
  out_of_range: Code.OutOfRange,
  permission_denied: Code.PermissionDenied,
};

/**
 * Node error codes of a call whose caller went away mid-call (a gateway killed or restarted, a
 * client that hung up): routine for a service, so nothing for an operator to act on.
 */
const CALLER_GONE_CODES: ReadonlySet<string> = new Set(["ERR_STREAM_PREMATURE_CLOSE", "ECONNRESET", "EPIPE", "ERR_HTTP2_STREAM_CANCEL", "ERR_HTTP2_INVALID_STREAM"]);

/**
 * The error an RPC answers with: a RunnerError keeps its message; a caller that went away is
 * CANCELED, logged at debug; anything else is logged at error and becomes a generic Internal.
 */
export function connectErrorFrom(err: unknown, log: Logger, rpc: string): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof RunnerError) return new ConnectError(err.message, CODE_OF_KIND[err.kind]);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && CALLER_GONE_CODES.has(code)) {
    log.debug({ rpc, reason: code }, "the caller went away during the call");
    return new ConnectError("the caller went away", Code.Canceled);
  }
  log.error({ err, rpc }, "unexpected error in RPC");
  return new ConnectError("internal error in the terminal runner", Code.Internal);
}
