import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { PACKAGE_ROOT } from "../../lib/package-root.js";

/** The scripts stay beside the sources (the compiler does not copy them): found from the package root. */
const SCRIPTS = join(PACKAGE_ROOT, "services", "runner", "shell-scripts");
/** The bash script that reports prompts and commands (read with --rcfile instead of ~/.bashrc, which it sources). */
const BASH_SCRIPT = join(SCRIPTS, "bash-integration.sh");
/** The directory zsh is pointed at (ZDOTDIR); its files source the user's own and add the hooks. */
const ZSH_DIRECTORY = join(SCRIPTS, "zsh");

/** What starting a shell with integration changes: extra arguments and environment variables. */
export interface ShellInjection {
  args: string[];
  env: Record<string, string>;
}

/**
 * How to start an interactive shell so that it reports its commands (bash and zsh), or undefined
 * for any other shell, which then simply runs without command detection.
 */
export function shellInjectionFor(shell: string, env: Record<string, string>): ShellInjection | undefined {
  switch (basename(shell)) {
    case "bash":
      return existsSync(BASH_SCRIPT) ? { args: ["--rcfile", BASH_SCRIPT], env: {} } : undefined;
    case "zsh":
      return existsSync(ZSH_DIRECTORY) ? { args: [], env: { ZDOTDIR: ZSH_DIRECTORY, AHP_USER_ZDOTDIR: env.ZDOTDIR ?? env.HOME ?? "" } } : undefined;
    default:
      return undefined;
  }
}
