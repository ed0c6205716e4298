import { Code, ConnectError } from "@connectrpc/connect";

/**
 * The canonical gRPC name of every status code, as gRPC's own documentation, grpc-status tooling and
 * dashboards spell them (SCREAMING_SNAKE, and CANCELLED with two Ls, unlike connect's `Code.Canceled`).
 * Every metric label and log field that names a code reads this one table.
 */
export const GRPC_CODE_NAMES: Readonly<Record<Code | 0, string>> = {
  0: "OK",
  [Code.Canceled]: "CANCELLED",
  [Code.Unknown]: "UNKNOWN",
  [Code.InvalidArgument]: "INVALID_ARGUMENT",
  [Code.DeadlineExceeded]: "DEADLINE_EXCEEDED",
  [Code.NotFound]: "NOT_FOUND",
  [Code.AlreadyExists]: "ALREADY_EXISTS",
  [Code.PermissionDenied]: "PERMISSION_DENIED",
  [Code.ResourceExhausted]: "RESOURCE_EXHAUSTED",
  [Code.FailedPrecondition]: "FAILED_PRECONDITION",
  [Code.Aborted]: "ABORTED",
  [Code.OutOfRange]: "OUT_OF_RANGE",
  [Code.Unimplemented]: "UNIMPLEMENTED",
  [Code.Internal]: "INTERNAL",
  [Code.Unavailable]: "UNAVAILABLE",
  [Code.DataLoss]: "DATA_LOSS",
  [Code.Unauthenticated]: "UNAUTHENTICATED",
};

/** The name a call that succeeded is counted under. */
export const GRPC_OK = GRPC_CODE_NAMES[0];

/** The gRPC name of the code a call failed with (an error that is not a ConnectError counts as UNKNOWN, as connect answers it). */
export function grpcCodeNameOf(err: unknown): string {
  return GRPC_CODE_NAMES[ConnectError.from(err).code];
}
