/** JSON-RPC 2.0 and AHP error codes the gateway answers with. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  AlreadyExists: -32003,
  UnsupportedProtocolVersion: -32005,
  AuthRequired: -32007,
  NotFound: -32008,
  PermissionDenied: -32009,
} as const;

/** What a request that succeeded is counted under, spelled as gRPC's OK (the runner's metrics say the same). */
export const OK_CODE_NAME = "OK";

const CODE_NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name.replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase()]));

/** An error code's name in gRPC's spelling (-32602 is INVALID_PARAMS), for metric labels and logs; a code not in the table is UNKNOWN. */
export function errorCodeName(code: number): string {
  return CODE_NAMES.get(code) ?? "UNKNOWN";
}
