import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { TERMINAL_TYPE } from "../../../lib/terminal-type.js";

/** Where ncurses looks for terminal descriptions when TERMINFO and TERMINFO_DIRS name none (Debian's order). */
const SYSTEM_TERMINFO_DIRS = ["/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo", "/usr/lib/terminfo"];

/**
 * True when a terminal description named `name` is installed where programs started with `env`
 * will look for it (their TERMINFO, their ~/.terminfo, TERMINFO_DIRS, the system's directories), in
 * either of the layouts ncurses uses (a first-letter directory, or its hex code).
 */
export function hasTerminfo(name: string, env: Record<string, string | undefined>): boolean {
  if (!TERMINAL_TYPE.test(name)) return false;
  const dirs = [env.TERMINFO, join(env.HOME ?? homedir(), ".terminfo"), ...(env.TERMINFO_DIRS ?? "").split(":"), ...SYSTEM_TERMINFO_DIRS].filter((dir): dir is string => !!dir);
  const first = name[0]!;
  return dirs.some((dir) => existsSync(join(dir, first, name)) || existsSync(join(dir, first.charCodeAt(0).toString(16), name)));
}
