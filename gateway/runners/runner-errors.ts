import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";

/** The one table from the runner's RPC codes to the JSON-RPC codes clients get. */
const JSON_RPC_CODE_OF: Partial<Record<Code, number>> = {
  [Code.NotFound]: ErrorCode.NotFound,
  [Code.InvalidArgument]: ErrorCode.InvalidParams,
  [Code.OutOfRange]: ErrorCode.InvalidParams,
  [Code.AlreadyExists]: ErrorCode.AlreadyExists,
  [Code.PermissionDenied]: ErrorCode.PermissionDenied,
};

/** Codes that mean "the runner cannot be reached right now" rather than "the request was wrong". */
const UNREACHABLE = new Set([Code.Unavailable, Code.DeadlineExceeded, Code.Canceled, Code.Unauthenticated]);

/** True when a runner error means the runner is down, restarting or refusing the gateway. */
export function isRunnerUnreachable(err: unknown): boolean {
  return UNREACHABLE.has(ConnectError.from(err).code);
}

/** The JSON-RPC error for a failed runner call, with a message a person can act on. */
export function jsonRpcErrorFromRunner(err: unknown, doing: string): JsonRpcError {
  const error = ConnectError.from(err);
  if (UNREACHABLE.has(error.code)) {
    const why = error.code === Code.Unauthenticated ? "it refused the gateway's runner token" : error.rawMessage;
    return new JsonRpcError(ErrorCode.InternalError, `Cannot ${doing}: the terminal runner is unavailable (${why})`);
  }
  return new JsonRpcError(JSON_RPC_CODE_OF[error.code] ?? ErrorCode.InternalError, `Cannot ${doing}: ${error.rawMessage}`);
}
