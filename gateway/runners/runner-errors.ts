import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";

/** The one table from the runner's RPC codes to the JSON-RPC codes clients get. */
const JSON_RPC_CODE_OF: Partial<Record<Code, number>> = {
  [Code.NotFound]: ErrorCode.NotFound,
  [Code.InvalidArgument]: ErrorCode.InvalidParams,
  [Code.OutOfRange]: ErrorCode.InvalidParams,
  // A shell that failed its check at spawn, a cwd that is gone: the request cannot be run as it stands.
  [Code.FailedPrecondition]: ErrorCode.InvalidParams,
  [Code.AlreadyExists]: ErrorCode.AlreadyExists,
  [Code.PermissionDenied]: ErrorCode.PermissionDenied,
};

/** Codes that mean "the runner cannot be reached right now" rather than "the request was wrong". */
const UNREACHABLE = new Set([Code.Unavailable, Code.DeadlineExceeded, Code.Canceled, Code.Unauthenticated]);

/** True when a runner error means the runner is down, restarting or refusing the gateway (its token or its TLS). */
export function isRunnerUnreachable(err: unknown): boolean {
  return UNREACHABLE.has(ConnectError.from(err).code) || tlsProblemOf(err) !== undefined;
}

/** The JSON-RPC error for a failed runner call, with a message a person can act on. */
export function jsonRpcErrorFromRunner(err: unknown, doing: string): JsonRpcError {
  const error = ConnectError.from(err);
  const tls = tlsProblemOf(err);
  if (UNREACHABLE.has(error.code) || tls) {
    const why = tls ?? (error.code === Code.Unauthenticated ? "it refused the gateway's runner token" : error.rawMessage);
    return new JsonRpcError(ErrorCode.InternalError, `Cannot ${doing}: the terminal runner is unavailable (${why})`);
  }
  return new JsonRpcError(JSON_RPC_CODE_OF[error.code] ?? ErrorCode.InternalError, `Cannot ${doing}: ${error.rawMessage}`);
}

/**
 * What went wrong in a TLS handshake with the runner, in words, or undefined when the failure was
 * not one: Node names certificate checks by OpenSSL's verify codes and a peer's alerts as ERR_SSL_*.
 */
function tlsProblemOf(err: unknown): string | undefined {
  const code = (ConnectError.from(err).cause as { code?: unknown } | undefined)?.code ?? (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string") return undefined;
  if (code === "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED") return "it wants a client certificate: give the gateway --runner-cert and --runner-key";
  if (/^ERR_SSL_.*ALERT_(BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|DECRYPT_ERROR|ACCESS_DENIED)$/.test(code)) return `it refused the gateway's client certificate (${code})`;
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "ERR_SSL_PACKET_LENGTH_TOO_LONG") return `it does not speak TLS (${code}): is it an http:// runner?`;
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID" || /^(UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|CERT_)/.test(code)) return `its certificate is not trusted (${code}): --runner-ca names the CA to trust`;
  return code.startsWith("ERR_SSL_") ? `the TLS handshake failed (${code})` : undefined;
}
