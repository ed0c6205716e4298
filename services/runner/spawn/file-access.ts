import { realpathSync, statSync, type Stats } from "node:fs";
import { dirname, sep } from "node:path";

/** Who a permission is checked for: a uid and every group it is in. */
export interface Identity {
  uid: number;
  groups: readonly number[];
}

/** Permission bits, as the owner's triple (the group's and others' are shifted from it). */
export const READ = 4;
export const WRITE = 2;
export const EXECUTE = 1;
/** Group and others may write. */
const WRITABLE_BY_OTHERS = 0o022;
/** The sticky bit: in such a directory only an entry's owner (or the directory's, or root) may rename or remove it. */
const STICKY = 0o1000;

/**
 * True when the mode bits let `who` do `want` with the file (POSIX permission bits; ACLs are not
 * read). Root may read and write anything, and execute what anyone may execute, as the kernel says.
 */
export function permits(stat: Stats, who: Identity, want: number): boolean {
  if (who.uid === 0) return want !== EXECUTE || stat.isDirectory() || (stat.mode & 0o111) !== 0;
  const shift = stat.uid === who.uid ? 6 : who.groups.includes(stat.gid) ? 3 : 0;
  return ((stat.mode >> shift) & want) === want;
}

/** Why `who` cannot go into `path` (every directory on the way needs execute permission), or undefined when it can. */
export function enterProblem(path: string, who: Identity): string | undefined {
  let parent = path;
  for (;;) {
    if (!permits(statSync(parent), who, EXECUTE)) return parent === path ? "permission denied" : `permission denied on ${parent}`;
    const up = dirname(parent);
    if (up === parent) return undefined;
    parent = up;
  }
}

/**
 * Why a shell a client named cannot be trusted for `who`, or undefined when it can: it must be a
 * regular file `who` may execute, owned by root or `who`, writable by nobody else, and every directory
 * on its resolved path must be owned by root or `who` and writable by nobody else unless sticky.
 * Then only root and `who` can change or replace it, so what was checked is what runs.
 */
export function untrustedShellProblem(shell: string, who: Identity): string | undefined {
  let real: string;
  let stat: Stats;
  try {
    real = realpathSync(shell);
    stat = statSync(real);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? `${shell} does not exist` : `${shell} cannot be read (${(err as NodeJS.ErrnoException).code})`;
  }
  const trusted = (owner: number): boolean => owner === 0 || owner === who.uid;
  if (!stat.isFile()) return `${shell} is not a regular file`;
  if (!trusted(stat.uid)) return `${shell} belongs to uid ${stat.uid}, neither root nor the account it would run as`;
  if ((stat.mode & WRITABLE_BY_OTHERS) !== 0) return `${shell} is writable by its group or others (mode ${(stat.mode & 0o7777).toString(8)})`;
  if (!permits(stat, who, EXECUTE)) return `${shell} is not executable`;
  for (let directory = dirname(real); ; directory = dirname(directory)) {
    const dir = statSync(directory);
    if (!trusted(dir.uid)) return `${directory} (on the way to ${shell}) belongs to uid ${dir.uid}, neither root nor the account it would run as`;
    if ((dir.mode & WRITABLE_BY_OTHERS) !== 0 && (dir.mode & STICKY) === 0) return `${directory} (on the way to ${shell}) is writable by its group or others`;
    if (directory === sep || dirname(directory) === directory) return undefined;
  }
}
