/**
 * One permission per terminal operation, and one of scope: without `terminal:others` the other
 * grants reach only the terminals the person created (and read the host's own), with it every terminal.
 */
export const GRANTS = [
  "terminal:create",
  "terminal:dispose",
  "terminal:output",
  "terminal:input",
  "terminal:resize",
  "terminal:claim",
  "terminal:rename",
  "terminal:clear",
  "terminal:others",
] as const;

/** A permission. */
export type Grant = (typeof GRANTS)[number];

/** Names that stand for several grants: reading a terminal, and everything else one can do to one. */
export const GRANT_GROUPS: Readonly<Record<string, readonly Grant[]>> = {
  "terminal:read": ["terminal:output"],
  "terminal:write": ["terminal:create", "terminal:dispose", "terminal:input", "terminal:resize", "terminal:claim", "terminal:rename", "terminal:clear"],
};

/** Roles every gateway knows; a users file may redefine them. Only an admin reaches other people's terminals. */
export const BUILT_IN_ROLES: Readonly<Record<string, readonly string[]>> = {
  admin: ["terminal:read", "terminal:write", "terminal:others"],
  member: ["terminal:read", "terminal:write"],
  guest: [],
};

/** True for a grant or group name. */
export function isGrantName(name: string): boolean {
  return (GRANTS as readonly string[]).includes(name) || Object.hasOwn(GRANT_GROUPS, name);
}

/**
 * The grants a set of roles gives, with custom roles taking the place of built-ins of the same
 * name. A role nothing defines gives nothing; it is reported through `unknownRole`.
 */
export function grantsOfRoles(roles: readonly string[], customRoles: Readonly<Record<string, readonly string[]>>, unknownRole: (role: string) => void): Set<Grant> {
  const grants = new Set<Grant>();
  for (const role of roles) {
    const names = Object.hasOwn(customRoles, role) ? customRoles[role]! : Object.hasOwn(BUILT_IN_ROLES, role) ? BUILT_IN_ROLES[role]! : undefined;
    if (!names) {
      unknownRole(role);
      continue;
    }
    for (const name of names) {
      for (const grant of Object.hasOwn(GRANT_GROUPS, name) ? GRANT_GROUPS[name]! : [name as Grant]) if ((GRANTS as readonly string[]).includes(grant)) grants.add(grant);
    }
  }
  return grants;
}
