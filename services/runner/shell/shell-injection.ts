import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { PACKAGE_ROOT } from "../../../lib/package-root.js";

/** The scripts stay beside the sources (the compiler does not copy them): found from the package root. */
export const SHELL_SCRIPTS = join(PACKAGE_ROOT, "services", "runner", "shell", "shell-scripts");
/** The bash script that reports prompts and commands (read with --rcfile instead of ~/.bashrc, which it sources). */
const BASH_SCRIPT = "bash-integration.sh";
/** The directory zsh is pointed at (ZDOTDIR); its files source the user's own and add the hooks. */
const ZSH_DIRECTORY = "zsh";

/** What starting a shell with integration changes: extra arguments and environment variables. */
export interface ShellInjection {
  args: string[];
  env: Record<string, string>;
}

/**
 * How to start an interactive shell so that it reports its commands (bash and zsh), or undefined
 * for any other shell, which then simply runs without command detection.
 */
export function shellInjectionFor(shell: string, env: Record<string, string>, scripts = SHELL_SCRIPTS): ShellInjection | undefined {
  const bash = join(scripts, BASH_SCRIPT);
  const zsh = join(scripts, ZSH_DIRECTORY);
  switch (basename(shell)) {
    case "bash":
      return existsSync(bash) ? { args: ["--rcfile", bash], env: {} } : undefined;
    case "zsh":
      return existsSync(zsh) ? { args: [], env: { ZDOTDIR: zsh, AHP_USER_ZDOTDIR: env.ZDOTDIR ?? env.HOME ?? "" } } : undefined;
    default:
      return undefined;
  }
}
