import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../../lib/logger.js";
import { RunnerError, type RunnerErrorKind } from "../runner-error.js";

/** The one table from the runner's refusals to RPC codes. */
const CODE_OF_KIND: Record<RunnerErrorKind, Code> = {
  not_found: Code.NotFound,
  invalid_argument: Code.InvalidArgument,
  failed_precondition: Code.FailedPrecondition,
  already_exists: Code.AlreadyExists,
  resource_exhausted: Code.ResourceExhausted,
  out_of_range: Code.OutOfRange,
  permission_denied: Code.PermissionDenied,
};

/** The error an RPC answers with: a RunnerError keeps its message, anything else is logged and becomes a generic Internal. */
export function connectErrorFrom(err: unknown, log: Logger, rpc: string): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof RunnerError) return new ConnectError(err.message, CODE_OF_KIND[err.kind]);
  log.error({ err, rpc }, "unexpected error in RPC");
  return new ConnectError("internal error in the terminal runner", Code.Internal);
}
