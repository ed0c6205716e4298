/**
 * Node and V8 options that open a file at start, without close-on-exec, and keep writing to it:
 * the runner closes every such descriptor before its first terminal (inheritable-descriptors.ts),
 * and V8 then writes into whatever reuses the number, such as a client's HTTP/2 connection.
 */
const FILE_KEEPING_OPTIONS = new Set([
  "--prof",
  "--perf-basic-prof",
  "--perf-basic-prof-only-functions",
  "--perf-prof",
  "--logfile",
  "--log",
  "--log-all",
  "--log-code",
  "--log-deopt",
  "--log-function-events",
  "--log-ic",
  "--log-internal-timer-events",
  "--log-maps",
  "--log-source-code",
]);

/** The options among node's own (`execArgv`) and NODE_OPTIONS that would keep a file open from start. */
export function fileKeepingOptions(execArgv: readonly string[], nodeOptions = ""): string[] {
  return [...execArgv, ...nodeOptions.split(/\s+/)].filter((option) => FILE_KEEPING_OPTIONS.has(option.split("=")[0]!.replace(/_/g, "-")));
}
