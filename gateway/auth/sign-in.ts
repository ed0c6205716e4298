import type { Principal } from "./access.js";

/** The longest one Node timer waits (about 24.8 days); a later deadline is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Who one connection is signed in as, and until when: a sign-in with a lifetime (1.0's
 * `authenticate.expiresIn`) lapses at its deadline, on a timer and whenever it is read after it,
 * and `onLapse` is told once.
 */
export class SignIn {
  private current: Principal | undefined;
  private deadline: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    initial: Principal | undefined,
    private readonly onLapse: () => void,
  ) {
    this.current = initial;
  }

  /** The principal, or undefined while signed out (or lapsed). */
  get principal(): Principal | undefined {
    this.check();
    return this.current;
  }

  /** Signs in as `principal` (out when undefined), until `expiresAtMs` when given. */
  set(principal: Principal | undefined, expiresAtMs?: number): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.current = principal;
    this.deadline = principal === undefined ? undefined : expiresAtMs;
    this.schedule();
  }

  /** Stops the timer (the socket is gone). */
  dispose(): void {
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.deadline === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.check();
    }, Math.min(MAX_TIMER_MS, Math.max(0, this.deadline - Date.now())));
    this.timer.unref();
  }

  private check(): void {
    if (this.deadline === undefined) return;
    if (Date.now() < this.deadline) {
      if (!this.timer) this.schedule();
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.current = undefined;
    this.deadline = undefined;
    this.onLapse();
  }
}
