import { copyFileSync, existsSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's skeleton: what a fresh account's HOME starts with (.bashrc, .profile, .bash_logout). */
const SKELETON = "/etc/skel";

/**
 * A fresh HOME for bench shells, filled from the skeleton. Never the machine's own HOME: a
 * developer's ~/.bashrc (pyenv init, nvm, a slow prompt) would be measured instead of the product.
 */
export function createScratchHome(): string {
  const home = mkdtempSync(join(tmpdir(), "bench-home-"));
  if (!existsSync(SKELETON)) return home;
  for (const name of readdirSync(SKELETON)) {
    const from = join(SKELETON, name);
    if (statSync(from).isFile()) copyFileSync(from, join(home, name));
  }
  return home;
}
