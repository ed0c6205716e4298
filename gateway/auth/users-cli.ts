import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { ConfigError, parseFlags } from "../../lib/cli.js";
import { hashSecret, parseUsersFile, UNIX_USER_PATTERN, USER_ID_PATTERN, writeUsersFile, type UsersFile } from "./users-file.js";

/** How `users` is used. */
export const USERS_USAGE = `Usage: npm run gateway -- users <command> [--users FILE]
  users add NAME --role ROLE [--role ROLE ...] [--expires ISO-DATE] [--unix-user ACCOUNT]
                                                                     add a person (no secret yet); their terminals
                                                                     run as ACCOUNT (the runner needs --allow-run-as)
  users token NAME                                                   issue a new secret: printed once, only its hash is kept
  users list                                                         people, roles, whether a secret is set, expiry
  users rm NAME                                                      remove a person (their connections are refused from their next command)
  users --help                                                       print this
The file is --users FILE, else $GATEWAY_USERS, else ./users.json. Writes are atomic.`;

/** Where `users` writes what it prints: results on stdout, warnings and errors on stderr. */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

/** Runs a `users` command and returns the exit code (0 done, 1 refused, 2 misused). */
export function runUsersCommand(argv: string[], env: NodeJS.ProcessEnv, io: CliOutput): number {
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseFlagsWithPositionals(argv));
  } catch (err) {
    io.err(`users: ${(err as Error).message}\n${USERS_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.out(`${USERS_USAGE}\n`);
    return 0;
  }
  const path = values.users ?? env.GATEWAY_USERS ?? "users.json";
  const [command, name, ...extra] = positionals;
  if (!command || extra.length > 0 || (command !== "list" && !name)) {
    io.err(`${USERS_USAGE}\n`);
    return 2;
  }
  let file: UsersFile;
  try {
    file = existsSync(path) ? parseUsersFile(readFileSync(path, "utf8")) : { users: [], roles: {} };
  } catch (err) {
    io.err(`users: ${path} is not a usable users file (${(err as Error).message}); fix it by hand, it is left as it is\n`);
    return 1;
  }
  const user = file.users.find((record) => record.id === name);
  switch (command) {
    case "list":
      for (const record of file.users) {
        io.out(`${record.id}\troles=${record.roles.join(",") || "-"}\tsecret=${record.token ? "set" : "none"}\texpires=${record.expiresAt ?? "never"}\tunix-user=${record.unixUser ?? "-"}\n`);
      }
      return 0;
    case "add": {
      if (user) return refuse(io, `user ${name} already exists`);
      if (!USER_ID_PATTERN.test(name!)) return refuse(io, "a name is 1 to 64 letters, digits, . _ @ -");
      if (values.role.length === 0) return refuse(io, "give at least one --role");
      if (values.expires !== undefined && Number.isNaN(Date.parse(values.expires))) return refuse(io, "--expires must be an ISO 8601 date");
      if (values["unix-user"] !== undefined && !UNIX_USER_PATTERN.test(values["unix-user"])) return refuse(io, "--unix-user must be a Unix account name");
      file.users.push({
        id: name!,
        roles: values.role,
        ...(values.expires ? { expiresAt: new Date(values.expires).toISOString() } : {}),
        ...(values["unix-user"] ? { unixUser: values["unix-user"] } : {}),
      });
      writeUsersFile(path, file);
      io.err(`added ${name} (${values.role.join(", ")}); issue a secret with: users token ${name}\n`);
      return 0;
    }
    case "token": {
      if (!user) return refuse(io, `no user ${name}`);
      const secret = randomBytes(32).toString("base64url");
      user.token = hashSecret(secret);
      writeUsersFile(path, file);
      io.out(`${secret}\n`);
      io.err(`this is the only time the secret for ${name} is shown: only its hash is stored\n`);
      return 0;
    }
    case "rm":
      if (!user) return refuse(io, `no user ${name}`);
      file.users = file.users.filter((record) => record !== user);
      writeUsersFile(path, file);
      io.err(`removed ${name}\n`);
      return 0;
    default:
      io.err(`${USERS_USAGE}\n`);
      return 2;
  }
}

function refuse(io: CliOutput, message: string): number {
  io.err(`users: ${message}\n`);
  return 1;
}

function parseFlagsWithPositionals(argv: string[]) {
  const flags: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help") flags.push(arg);
    else if (arg.startsWith("--")) {
      flags.push(arg);
      if (!arg.includes("=") && i + 1 < argv.length) flags.push(argv[++i]!);
    } else positionals.push(arg);
  }
  const values = parseFlags(flags, {
    users: { type: "string" },
    role: { type: "string", multiple: true, default: [] },
    expires: { type: "string" },
    "unix-user": { type: "string" },
    help: { type: "boolean", default: false },
  });
  if (positionals.length === 0 && !values.help) throw new ConfigError("no command");
  return { values, positionals };
}
