import { readFileSync, statSync } from "node:fs";
import { ConfigError } from "../../lib/cli.js";
import type { Logger } from "../../lib/logger.js";
import { grantsOfRoles, type Grant } from "./grants.js";
import { parseUsersFile, secretMatches, type UserRecord, type UsersFile } from "./users-file.js";

/** A signed-in person as of now: who, with which roles and grants, the Unix account their terminals run as, and the hash of their current secret. */
export interface User {
  id: string;
  roles: string[];
  grants: ReadonlySet<Grant>;
  unixUser?: string;
  /** The stored hash of the secret that signs them in now; a sign-in made with an earlier one no longer stands. */
  credential?: string;
}

/**
 * How often a watched users file is looked at (one stat): a removal, a role change or an expiry
 * reaches live connections within this, well inside the second revocation is promised in.
 */
const WATCH_INTERVAL_MS = 250;

/**
 * The people in a users file, as the file says now: it is read again whenever it changed on disk,
 * so a removed or expired user's next command is refused without restarting anything. A file that
 * cannot be read or parsed lets nobody in (it fails closed) and is never rewritten by the gateway.
 */
export class UserDirectory {
  private users = new Map<string, { record: UserRecord; grants: ReadonlySet<Grant> }>();
  private version = "";

  constructor(
    private readonly path: string,
    private readonly log: Logger,
  ) {}

  /**
   * The directory of the users file at `path`, which must be readable and valid now: a gateway
   * started with a file it cannot use would let nobody in, so that is a ConfigError (exit code
   * `unreadableFile`) naming the file and the fix. Later changes are taken as they come.
   */
  static open(path: string, log: Logger): UserDirectory {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new ConfigError(`--users "${path}": cannot read it (${code}); create it with: npm run gateway -- users add NAME --role admin --users ${path}`, "unreadableFile");
    }
    try {
      parseUsersFile(text);
    } catch (err) {
      throw new ConfigError(`--users "${path}": ${(err as Error).message}; fix it by hand (the gateway never rewrites it)`, "unreadableFile");
    }
    return new UserDirectory(path, log);
  }

  /** The user whose secret this is, or undefined. */
  signIn(secret: string): User | undefined {
    for (const { record } of this.current().values()) if (secretMatches(secret, record.token)) return this.user(record.id);
    return undefined;
  }

  /** The user with this id as the file has them now, or undefined when removed or expired. */
  user(id: string): User | undefined {
    const entry = this.current().get(id);
    if (!entry || (entry.record.expiresAt !== undefined && Date.parse(entry.record.expiresAt) <= Date.now())) return undefined;
    const { record } = entry;
    return { id, roles: record.roles, grants: entry.grants, ...(record.unixUser ? { unixUser: record.unixUser } : {}), ...(record.token ? { credential: record.token } : {}) };
  }

  /** The ids of the people the file names no Unix account for (their terminals run as the services' own account). */
  withoutUnixUser(): string[] {
    return [...this.current().values()].filter(({ record }) => !record.unixUser).map(({ record }) => record.id);
  }

  /**
   * Calls `onChange` whenever what the file says may have changed for someone: the file changed on
   * disk, or an expiry in it passed. Returns a function that stops watching.
   */
  watch(onChange: () => void): () => void {
    this.current();
    let seen = this.version;
    let nextExpiry = this.nextExpiryAfter(Date.now());
    const timer = setInterval(() => {
      this.current();
      const now = Date.now();
      if (this.version === seen && nextExpiry > now) return;
      seen = this.version;
      nextExpiry = this.nextExpiryAfter(now);
      onChange();
    }, WATCH_INTERVAL_MS);
    timer.unref();
    return () => clearInterval(timer);
  }

  private nextExpiryAfter(now: number): number {
    let next = Infinity;
    for (const { record } of this.users.values()) {
      const at = record.expiresAt === undefined ? Infinity : Date.parse(record.expiresAt);
      if (at > now && at < next) next = at;
    }
    return next;
  }

  private current(): Map<string, { record: UserRecord; grants: ReadonlySet<Grant> }> {
    let version: string;
    try {
      const stat = statSync(this.path);
      version = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      version = "missing";
    }
    if (version === this.version) return this.users;
    this.version = version;
    this.users = new Map();
    let file: UsersFile;
    try {
      file = parseUsersFile(readFileSync(this.path, "utf8"));
    } catch (err) {
      const reason = (err as Error).message;
      this.log.error({ path: this.path, reason }, "users file unusable: nobody can sign in until it is fixed");
      return this.users;
    }
    for (const record of file.users) {
      const grants = grantsOfRoles(record.roles, file.roles, (role) => this.log.warn({ user: record.id, role }, "role is defined nowhere; it grants nothing"));
      this.users.set(record.id, { record, grants });
    }
    this.log.info({ path: this.path, users: this.users.size }, "users file loaded");
    return this.users;
  }
}
