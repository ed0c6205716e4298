import { existsSync } from "node:fs";
import { lookUpAccount, ownAccount, type Account } from "./accounts.js";
import { SETPRIV } from "../process/setpriv.js";
import { RunnerError } from "../runner-error.js";

/** Whether this runner starts processes as other accounts, and whether root may be one of them. */
export interface RunAsOptions {
  allowed: boolean;
  allowRoot: boolean;
}

/**
 * Decides which account a spawn may run as. Only a runner started with --allow-run-as honours
 * `run_as`; the account must exist, uid 0 needs --allow-run-as-root, and a runner that is not root
 * can only "become" its own account.
 */
export class RunAsPolicy {
  constructor(
    private readonly options: RunAsOptions,
    private readonly own = ownAccount(),
    private readonly lookUp: (name: string) => Account | undefined = lookUpAccount,
  ) {}

  /** Why this runner, although allowed, cannot switch accounts; undefined when it can. */
  get cannotSwitch(): string | undefined {
    if (this.own.uid !== 0) return `the runner runs as uid ${this.own.uid}, not root, so it can start processes only as that account`;
    if (!existsSync(SETPRIV)) return `${SETPRIV} (util-linux) is missing`;
    return undefined;
  }

  /** The account a spawn asked for, checked; undefined for none (the runner's own account). */
  accountFor(name: string): Account | undefined {
    if (name === "") return undefined;
    if (!this.options.allowed) throw new RunnerError("permission_denied", `this runner does not start processes as other accounts (run_as ${JSON.stringify(name)}); start it with --allow-run-as`);
    const account = this.lookUp(name);
    if (!account) throw new RunnerError("invalid_argument", `run_as: there is no Unix account named ${JSON.stringify(name)}`);
    if (account.uid === 0 && !this.options.allowRoot) throw new RunnerError("permission_denied", `run_as ${name} is uid 0; a runner starts root shells only with --allow-run-as-root`);
    const cannot = account.uid === this.own.uid ? undefined : this.cannotSwitch;
    if (cannot) throw new RunnerError("failed_precondition", `cannot run as ${name}: ${cannot}`);
    return account;
  }
}
