/**
 * How the runner, the gateway and `npm start` exit when they cannot start, one code per kind of
 * cause, so a supervisor or a script can tell them apart (docs/operations.md lists them).
 */
export const EXIT_CODES = {
  /** Something the code did not expect (a bug), or a stop that overran its deadline. */
  unexpected: 1,
  /** A flag or environment variable is wrong. */
  usage: 2,
  /** A file a flag or variable names cannot be read, or holds something unusable (a token file, the users file). */
  unreadableFile: 3,
  /** A TLS certificate, key or CA file cannot serve: not PEM, a key of another certificate, expired. */
  badCertificate: 4,
  /** An address cannot be listened on: the port is taken, reserved, or the host is not this machine's. */
  cannotListen: 5,
  /** No runner answers when one is required at start (the gateway's --require-runner; `npm start`). */
  runnerUnreachable: 6,
} as const;

/** A kind of startup failure. */
export type ExitKind = keyof typeof EXIT_CODES;
