import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../lib/logger.js";

/** The kinds of refusal the runner's own code raises; each has exactly one RPC code. */
export type RunnerErrorKind =
  | "not_found"
  | "invalid_argument"
  | "failed_precondition"
  | "already_exists"
  | "resource_exhausted"
  | "out_of_range"
  | "permission_denied";

const CODE_OF_KIND: Record<RunnerErrorKind, Code> = {
  not_found: Code.NotFound,
  invalid_argument: Code.InvalidArgument,
  failed_precondition: Code.FailedPrecondition,
  already_exists: Code.AlreadyExists,
  resource_exhausted: Code.ResourceExhausted,
  out_of_range: Code.OutOfRange,
  permission_denied: Code.PermissionDenied,
};

/** A refusal with a message meant for the caller. Thrown by the runner's logic, turned into a ConnectError at the RPC boundary. */
export class RunnerError extends Error {
  constructor(
    readonly kind: RunnerErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "RunnerError";
  }
}

/** The error an RPC answers with: a RunnerError keeps its message, anything else is logged and becomes a generic Internal. */
export function connectErrorFrom(err: unknown, log: Logger, rpc: string): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof RunnerError) return new ConnectError(err.message, CODE_OF_KIND[err.kind]);
  log.error({ err, rpc }, "unexpected error in RPC");
  return new ConnectError("internal error in the terminal runner", Code.Internal);
}
