/** The kinds of refusal the runner's own code raises; rpc/connect-error.ts gives each exactly one RPC code. */
export type RunnerErrorKind =
  | "not_found"
  | "invalid_argument"
  | "failed_precondition"
  | "already_exists"
  | "aborted"
  | "resource_exhausted"
  | "out_of_range"
  | "permission_denied";

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
