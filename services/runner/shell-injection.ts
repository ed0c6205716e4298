import { existsSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

/** The bash script that reports prompts and commands (read with --rcfile instead of ~/.bashrc, which it sources). */
const BASH_SCRIPT = fileURLToPath(new URL("./shell-scripts/bash-integration.sh", import.meta.url));
/** The directory zsh is pointed at (ZDOTDIR); its files source the user's own and add the hooks. */
const ZSH_DIRECTORY = fileURLToPath(new URL("./shell-scripts/zsh", import.meta.url));

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
