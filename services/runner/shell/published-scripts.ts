import { chmodSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SHELL_SCRIPTS } from "./shell-injection.js";

/** Directories every account may enter and list; files every account may read. Nobody but the runner may change either. */
const DIRECTORY_MODE = 0o755;
const FILE_MODE = 0o644;

/**
 * A copy of the shell-integration scripts that every account can read, owned by the runner: the
 * sources may sit where other accounts cannot go (a home directory of mode 700), and a shell started
 * as another account reads its integration as that account. Removed with `remove()`.
 */
export function publishShellScripts(source = SHELL_SCRIPTS): { directory: string; remove(): void } {
  const directory = mkdtempSync(join(tmpdir(), "terminal-runner-scripts-"));
  cpSync(source, directory, { recursive: true });
  const open = (path: string): void => {
    const isDirectory = statSync(path).isDirectory();
    chmodSync(path, isDirectory ? DIRECTORY_MODE : FILE_MODE);
    if (isDirectory) for (const name of readdirSync(path)) open(join(path, name));
  };
  open(directory);
  return { directory, remove: () => rmSync(directory, { recursive: true, force: true }) };
}
