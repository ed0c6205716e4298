import { sameSecret } from "../../lib/same-secret.js";
import { GRANTS, type Grant } from "./grants.js";
import type { UserDirectory } from "./user-directory.js";

/**
 * Who a connection acts for: the holder of the connection token, or a user from the users file
 * with the stored hash of the secret they signed in with (a rotated secret ends that sign-in).
 */
export type Principal = { kind: "token-holder" } | { kind: "user"; id: string; credential: string };

/** Who a principal is, for logs and per-person counts: the user's id, or "token-holder" (everyone holding the connection token is one person). */
export function principalId(principal: Principal): string {
  return principal.kind === "user" ? principal.id : "token-holder";
}

/** What a principal may do right now. */
export interface Standing {
  /** How refusals name them. */
  name: string;
  grants: ReadonlySet<Grant>;
  /** The Unix account their terminals run as; undefined: the services' own. */
  runAs?: string;
}

/** RFC 9728 metadata for the resource clients authenticate against (snake_case on the wire). */
export interface ProtectedResourceMetadata {
  resource: string;
  resource_name?: string;
  scopes_supported?: string[];
  required?: boolean;
}

/** How connections sign in and what they may do. */
export interface AccessPolicy {
  /** The resource `authenticate` names, as `-32007` advertises it. */
  readonly resource: ProtectedResourceMetadata;
  /** Who a new connection is before any `authenticate`. */
  initialPrincipal(): Principal | undefined;
  /** Who presents this secret, or undefined for a wrong one. */
  signIn(secret: string): Principal | undefined;
  /** What a principal may do now, or undefined when it no longer may do anything (removed, expired). */
  standing(principal: Principal): Standing | undefined;
  /** Calls `onChange` whenever some principal's standing may have changed; returns a function that stops it. Absent: standings never change. */
  watch?(onChange: () => void): () => void;
}

/** The resource clients name in `authenticate`. */
export const AUTH_RESOURCE = "ahp-terminal-gateway";

const ALL_GRANTS: ReadonlySet<Grant> = new Set(GRANTS);

function metadata(resource: string): ProtectedResourceMetadata {
  return { resource, resource_name: "AHP terminal gateway", scopes_supported: [...GRANTS], required: true };
}

/** Without a users file: whoever holds the connection token is signed in as a member, as the transport already checked. */
export function tokenHolderAccess(connectionToken: string, resource: string): AccessPolicy {
  return {
    resource: metadata(resource),
    initialPrincipal: () => ({ kind: "token-holder" }),
    signIn: (secret) => (sameSecret(secret, connectionToken) ? { kind: "token-holder" } : undefined),
    standing: () => ({ name: "the connection token's holder (member)", grants: ALL_GRANTS }),
  };
}

/** With a users file: connections start signed out and sign in with a user's secret; roles decide grants. */
export function usersFileAccess(directory: UserDirectory, resource: string): AccessPolicy {
  return {
    resource: metadata(resource),
    initialPrincipal: () => undefined,
    signIn(secret) {
      const user = directory.signIn(secret);
      return user?.credential === undefined ? undefined : { kind: "user", id: user.id, credential: user.credential };
    },
    standing(principal) {
      if (principal.kind !== "user") return undefined;
      const user = directory.user(principal.id);
      // A secret rotated (`users token`) or taken away ends every sign-in made with the old one, as removal does.
      if (!user || user.credential !== principal.credential) return undefined;
      return { name: `${user.id} (${user.roles.join(", ") || "no roles"})`, grants: user.grants, ...(user.unixUser ? { runAs: user.unixUser } : {}) };
    },
    watch: (onChange) => directory.watch(onChange),
  };
}
