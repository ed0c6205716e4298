import { execFileSync } from "node:child_process";
import { RunnerError } from "../runner-error.js";

/** A Unix account as the account database (NSS) has it: who the process becomes, where it lives, what it logs in with. */
export interface Account {
  name: string;
  uid: number;
  gid: number;
  /** Every group the account is in, its primary group included. */
  groups: number[];
  home: string;
  /** Its login shell ("" when the database names none). */
  shell: string;
}

/** What an account name may look like (POSIX portable names, as useradd accepts them), so nothing odd reaches getent. */
const ACCOUNT_NAME = /^[a-z_][a-z0-9_.-]{0,31}\$?$/i;
/** How long a lookup may take: NSS may ask a directory server, which must not hold a spawn forever. */
const LOOKUP_TIMEOUT_MS = 5_000;

/** Looks an account up by name; undefined when the database does not know it. INVALID_ARGUMENT for a name no account can have. */
export function lookUpAccount(name: string): Account | undefined {
  if (!ACCOUNT_NAME.test(name)) throw new RunnerError("invalid_argument", `run_as ${JSON.stringify(name)} is not a Unix account name`);
  const entry = getent(["passwd", name]);
  if (entry === undefined) return undefined;
  const [, , uid, gid, , home, shell] = entry.split(":");
  const groups = (getent(["initgroups", name]) ?? "").trim().split(/\s+/).slice(1).map(Number).filter(Number.isInteger);
  return { name, uid: Number(uid), gid: Number(gid), groups: [...new Set([Number(gid), ...groups])], home: home ?? "/", shell: shell ?? "" };
}

/** The account the runner itself runs as. */
export function ownAccount(): Pick<Account, "uid" | "gid" | "groups"> {
  return { uid: process.getuid!(), gid: process.getgid!(), groups: process.getgroups!() };
}

function getent(args: string[]): string | undefined {
  try {
    return execFileSync("getent", args, { encoding: "utf8", timeout: LOOKUP_TIMEOUT_MS, stdio: ["ignore", "pipe", "ignore"] }).trim().split("\n")[0];
  } catch (err) {
    // getent exits 2 for a key the database does not have.
    if ((err as { status?: number }).status === 2) return undefined;
    throw err;
  }
}
