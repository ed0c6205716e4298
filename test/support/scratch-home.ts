import { cpSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's skeleton: what a fresh account's HOME starts with (.bashrc, .profile, .bash_logout). */
const SKELETON = "/etc/skel";

/** A fresh HOME with the skeleton's dotfiles, so no rc file of this machine runs in a test's shells (root's runs pyenv). */
export function scratchHome(prefix = "test-home-"): string {
  const home = mkdtempSync(join(tmpdir(), prefix));
  if (existsSync(SKELETON)) cpSync(SKELETON, home, { recursive: true });
  return home;
}
