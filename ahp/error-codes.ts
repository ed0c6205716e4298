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
