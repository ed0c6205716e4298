import { createHash } from "node:crypto";
import { sameSecret } from "../../lib/same-secret.js";
import { renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isGrantName } from "./grants.js";

/** One person who may sign in: roles, the hash of their secret, and when it stops working. */
export interface UserRecord {
  id: string;
  roles: string[];
  /** `sha256:<hex>` of the secret; absent until a secret was issued. */
  token?: string;
  /** ISO 8601; after it the user can no longer sign in, and a signed-in connection is signed out. */
  expiresAt?: string;
  /** The Unix account this person's terminals run as (the runner needs --allow-run-as); absent: the services' own. */
  unixUser?: string;
}

/** The users file: people, and roles that add to or override the built-in ones. */
export interface UsersFile {
  users: UserRecord[];
  roles: Record<string, string[]>;
}

/** A users file that cannot be read as one; the gateway then lets nobody sign in. */
export class UsersFileError extends Error {}

/** What a user id may be: 1 to 64 letters, digits, . _ @ -. */
export const USER_ID_PATTERN = /^[\w.@-]{1,64}$/;

/** What a Unix account name may be (POSIX portable names, as useradd takes them; a trailing $ for machine accounts). */
export const UNIX_USER_PATTERN = /^[A-Za-z_][\w.-]{0,31}\$?$/;

/** `sha256:<hex>` of a secret, as the file stores it. */
export function hashSecret(secret: string): string {
  return `sha256:${createHash("sha256").update(secret, "utf8").digest("hex")}`;
}

/** True when `secret` hashes to `stored`, compared in constant time. */
export function secretMatches(secret: string, stored: string | undefined): boolean {
  return Boolean(stored) && sameSecret(hashSecret(secret), stored!);
}

/** Reads a users file strictly: anything malformed is a UsersFileError naming the problem. */
export function parseUsersFile(text: string): UsersFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsersFileError(`not JSON: ${(err as Error).message}`);
  }
  if (!isObject(value) || !Array.isArray(value.users)) throw new UsersFileError('expected an object with a "users" list');
  const roles: Record<string, string[]> = {};
  if (value.roles !== undefined) {
    if (!isObject(value.roles)) throw new UsersFileError('"roles" must map role names to lists of grants');
    for (const [name, grants] of Object.entries(value.roles)) {
      if (!Array.isArray(grants) || grants.some((grant) => typeof grant !== "string" || !isGrantName(grant))) {
        throw new UsersFileError(`role "${name}" must list known grants or groups`);
      }
      roles[name] = grants as string[];
    }
  }
  const ids = new Set<string>();
  const users = value.users.map((user: unknown, index: number): UserRecord => {
    if (!isObject(user) || typeof user.id !== "string" || !USER_ID_PATTERN.test(user.id)) throw new UsersFileError(`users[${index}] needs an id of letters, digits, . _ @ -`);
    if (ids.has(user.id)) throw new UsersFileError(`user "${user.id}" appears twice`);
    ids.add(user.id);
    if (!Array.isArray(user.roles) || user.roles.some((role) => typeof role !== "string")) throw new UsersFileError(`user "${user.id}" needs a list of roles`);
    if (user.token !== undefined && (typeof user.token !== "string" || !/^sha256:[0-9a-f]{64}$/.test(user.token))) {
      throw new UsersFileError(`user "${user.id}": token must be "sha256:<64 hex digits>"`);
    }
    if (user.expiresAt !== undefined && (typeof user.expiresAt !== "string" || Number.isNaN(Date.parse(user.expiresAt)))) {
      throw new UsersFileError(`user "${user.id}": expiresAt must be an ISO 8601 date`);
    }
    if (user.unixUser !== undefined && (typeof user.unixUser !== "string" || !UNIX_USER_PATTERN.test(user.unixUser))) {
      throw new UsersFileError(`user "${user.id}": unixUser must be a Unix account name (letters, digits, _ . -, not starting with a digit or -)`);
    }
    const record: UserRecord = { id: user.id, roles: user.roles as string[] };
    if (user.token !== undefined) record.token = user.token as string;
    if (user.expiresAt !== undefined) record.expiresAt = user.expiresAt as string;
    if (user.unixUser !== undefined) record.unixUser = user.unixUser as string;
    return record;
  });
  return { users, roles };
}

/** Writes a users file atomically (a temporary file renamed over it), readable by its owner only. */
export function writeUsersFile(path: string, file: UsersFile): void {
  const temporary = join(dirname(path), `.${process.pid}.${Date.now()}.users.tmp`);
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
