import type { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { ROOT_URI, type Uri } from "../../ahp/types.js";
import type { AccessPolicy, Principal } from "../auth/access.js";
import { accessError } from "../auth/checks.js";
import type { Grant } from "../auth/grants.js";
import { listScopeOf, sameScope, scopeLists, type ListScope } from "../auth/reach.js";
import { SignIn } from "../auth/sign-in.js";

/**
 * Who one connection acts for and what that lets it do: its sign-in (which may lapse, then
 * `onLapse` is told), the checks a request or action meets, and which terminals its root list
 * shows, taken again when its sign-in or standing changes.
 */
export class SessionAccess {
  private readonly signedIn: SignIn;
  /** Which terminals the root list shows, as of the last sign-in or review. */
  private scope: ListScope;

  constructor(
    private readonly policy: AccessPolicy,
    /** Who a terminal belongs to, by its channel. */
    private readonly ownerOf: (channel: Uri) => string | undefined,
    onLapse: () => void,
  ) {
    this.signedIn = new SignIn(policy.initialPrincipal(), onLapse);
    this.scope = this.currentScope();
  }

  /** Who the connection acts for; undefined while signed out (or lapsed). */
  get principal(): Principal | undefined {
    return this.signedIn.principal;
  }

  /** Signs in as `principal` (out when undefined), until `expiresAtMs` when given. */
  signIn(principal: Principal | undefined, expiresAtMs?: number): void {
    this.signedIn.set(principal, expiresAtMs);
  }

  /** The -32007 or -32009 a request gets when the connection may not use `grant` (on the terminal at `channel`, when given); undefined when it may. */
  errorFor(grant: Grant | undefined, channel?: Uri): JsonRpcError | undefined {
    const terminal = channel !== undefined && channel !== ROOT_URI ? { owner: this.ownerOf(channel) } : undefined;
    return accessError(this.policy, this.signedIn.principal, grant, terminal);
  }

  /** Whether the root list shows a terminal with this owner. */
  lists(owner: string | undefined): boolean {
    return scopeLists(this.scope, owner);
  }

  /** True when the root list shows every terminal (the shared root-list frames fit this connection as they are). */
  get listsAll(): boolean {
    return this.scope.kind === "all";
  }

  /** Takes the root list's scope again; true when it shows other terminals now. */
  rescope(): boolean {
    const scope = this.currentScope();
    if (sameScope(scope, this.scope)) return false;
    this.scope = scope;
    return true;
  }

  /** Stops the sign-in's timer (the socket is gone). */
  dispose(): void {
    this.signedIn.dispose();
  }

  private currentScope(): ListScope {
    const principal = this.signedIn.principal;
    return listScopeOf(principal, principal && this.policy.standing(principal));
  }
}
