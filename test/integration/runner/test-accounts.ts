import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/** Whether this process may create accounts and the runner may switch to them (root, with util-linux's setpriv). */
export const CAN_SWITCH_ACCOUNTS = process.getuid?.() === 0 && existsSync("/usr/bin/setpriv");
/** Why account tests are skipped here, or undefined when they run. */
export const ACCOUNTS_SKIP_REASON = CAN_SWITCH_ACCOUNTS
  ? undefined
  : `SKIPPED: tests that start terminals as other Unix accounts need root (to create throwaway accounts) and /usr/bin/setpriv; running as uid ${process.getuid?.()}`;

/** A throwaway Unix account, made for one test file and removed after it. */
export interface TestAccount {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** Creates an account with a home directory, the given login shell and, optionally, a supplementary group. */
export function createAccount(name: string, shell: string, group?: string): TestAccount {
  execFileSync("useradd", ["--create-home", "--shell", shell, ...(group ? ["--groups", group] : []), name]);
  const id = (flag: string): number => Number(execFileSync("id", [flag, name], { encoding: "utf8" }).trim());
  return { name, uid: id("-u"), gid: id("-g"), home: `/home/${name}` };
}

/** Removes an account and its home directory. */
export function removeAccount(account: TestAccount | undefined): void {
  if (account) execFileSync("userdel", ["--remove", account.name], { stdio: "ignore" });
}
