import type { ProcessSpec } from "./terminal-process.js";

/** The program that becomes another account before it execs the terminal's own: uid, gid and every group at once (util-linux). */
export const SETPRIV = "/usr/bin/setpriv";

/**
 * The spec that starts the process as its account: setpriv takes the account's uid, gid and every
 * group it is in (initgroups), then execs the program, which keeps the pid (the terminal's process
 * group leader) and inherits the pty or pipes. Neither node-pty's uid/gid (no setgroups: the
 * runner's own groups stay) nor child_process's (all supplementary groups dropped) gets groups right.
 */
export function asAccount(spec: ProcessSpec): ProcessSpec {
  if (!spec.runAs || spec.runAs.uid === process.getuid!()) return spec;
  const { uid, gid } = spec.runAs;
  return { ...spec, file: SETPRIV, args: [`--reuid=${uid}`, `--regid=${gid}`, "--init-groups", "--", spec.file, ...spec.args] };
}
