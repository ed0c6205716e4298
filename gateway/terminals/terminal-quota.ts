import type { Uri } from "../../ahp/types.js";

/** How many terminals one connection, and one person over all their connections, may have open at once. */
export interface TerminalLimits {
  perConnection: number;
  perUser: number;
}

/** Defaults: far above a person's tabs, far below what would exhaust a runner's ptys or a gateway's memory. */
export const DEFAULT_TERMINAL_LIMITS: TerminalLimits = { perConnection: 64, perUser: 256 };

/** Who asked for a terminal: the connection (any object standing for it) and the person it acts for. */
export interface TerminalOwner {
  connection: object;
  user: string;
}

/**
 * Counts the terminals each connection and each person opened that are still open, and refuses a
 * new one past the limits. A slot is taken before the runner is asked (so concurrent creates cannot
 * both slip under a limit) and given back when the terminal is gone or could not be created.
 */
export class TerminalQuota {
  private readonly owners = new Map<Uri, TerminalOwner & { pending: boolean }>();

  constructor(
    private readonly limits: TerminalLimits,
    /** True while a terminal created at `uri` is still open. */
    private readonly isOpen: (uri: Uri) => boolean,
    /** How many open terminals the runners record as this person's (created through any gateway); none when absent. */
    private readonly recordedOf: (user: string) => number = () => 0,
  ) {}

  /**
   * Takes a slot for `uri`, or returns why not. `created` keeps the slot once the terminal is
   * listed; `failed` gives it back.
   */
  take(uri: Uri, owner: TerminalOwner): { created(): void; failed(): void } | string {
    this.forgetClosed();
    let ofConnection = 0;
    let ofUser = 0;
    let pendingOfUser = 0;
    for (const held of this.owners.values()) {
      if (held.connection === owner.connection) ofConnection++;
      if (held.user !== owner.user) continue;
      ofUser++;
      if (held.pending) pendingOfUser++;
    }
    // Terminals the person made through other gateways count too: the runners' record holds them all.
    ofUser = Math.max(ofUser, this.recordedOf(owner.user) + pendingOfUser);
    if (ofConnection >= this.limits.perConnection) return `this connection has ${ofConnection} terminals open, the most it may (--max-terminals-per-connection); dispose of one first`;
    if (ofUser >= this.limits.perUser) return `${owner.user} has ${ofUser} terminals open, the most one person may (--max-terminals-per-user); dispose of one first`;
    const slot = { ...owner, pending: true };
    this.owners.set(uri, slot);
    return {
      created: () => {
        slot.pending = false;
      },
      failed: () => {
        if (this.owners.get(uri) === slot) this.owners.delete(uri);
      },
    };
  }

  private forgetClosed(): void {
    for (const [uri, held] of this.owners) if (!held.pending && !this.isOpen(uri)) this.owners.delete(uri);
  }
}
