/**
 * Parts of an environment variable's name that mark its value as a secret, matched anywhere in the
 * name and in any case (`GITHUB_TOKEN`, `db_password`, `AWS_SECRET_ACCESS_KEY`, `HTTP_AUTHORIZATION`).
 * Broad on purpose: hiding a harmless value costs a debug line a detail, showing a secret costs the secret.
 */
export const SECRET_NAME_PARTS = ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE", "SIGNATURE"] as const;

/** What a secret's value is logged as. */
export const REDACTED = "[redacted]";

/** True when `name` looks like it holds a secret (see SECRET_NAME_PARTS). */
export function looksSecret(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_NAME_PARTS.some((part) => upper.includes(part));
}

/** `env` fit for a debug log: every value whose variable's name looks secret replaced by REDACTED. */
export function redactedEnvironment(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [name, looksSecret(name) ? REDACTED : value]));
}
