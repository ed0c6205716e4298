import { readFileSync, statSync } from "node:fs";
import { ConfigError } from "./cli.js";

/** Permission bits that let the file's group or anyone else read it. */
const READABLE_BY_OTHERS = 0o044;

/** A secret read from a file: the secret, and a warning to log when the file is readable by more than its owner. */
export interface SecretFromFile {
  secret: string;
  warning?: string;
}

/**
 * The secret in the file at `path` (`flag` names where it came from in errors): its contents with
 * one trailing newline removed; an unreadable or empty file is a ConfigError. A file its group or
 * others may read still works, with a warning: anyone who can read it can use the secret.
 */
export function readSecretFile(flag: string, path: string): SecretFromFile {
  let text: string;
  let mode: number;
  try {
    text = readFileSync(path, "utf8");
    mode = statSync(path).mode;
  } catch (err) {
    throw new ConfigError(`${flag}: cannot read "${path}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (check the path and that this account may read it)`, "unreadableFile");
  }
  const secret = text.replace(/\r?\n$/, "");
  if (secret.trim() === "") throw new ConfigError(`${flag}: "${path}" is empty; put the token in it, on one line`, "unreadableFile");
  if (/[\r\n]/.test(secret)) throw new ConfigError(`${flag}: "${path}" holds more than one line; keep only the token in it`, "unreadableFile");
  return (mode & READABLE_BY_OTHERS) !== 0 ? { secret, warning: `${flag} ${path} is readable by its group or others (mode ${(mode & 0o777).toString(8)}): anyone who can read it can use the token; chmod 600 it` } : { secret };
}

/** Where a secret may come from, in the order they are tried. */
export interface SecretSources {
  /** `--NAME`'s value and flag name. */
  flag: { name: string; value: string | undefined };
  /** `--NAME-file`'s value and flag name. */
  fileFlag: { name: string; value: string | undefined };
  /** The `*_FILE` environment variable's name. */
  fileVariable: string;
  /** The plain environment variable's name (kept for compatibility). */
  variable: string;
}

/**
 * The secret from the first source that has one: the flag, the file flag, the file variable, then
 * the variable; undefined when none does. Giving both the flag and the file flag is a ConfigError.
 */
export function resolveSecret(sources: SecretSources, env: NodeJS.ProcessEnv): SecretFromFile | undefined {
  const { flag, fileFlag } = sources;
  if (flag.value !== undefined && fileFlag.value !== undefined) throw new ConfigError(`give --${flag.name} or --${fileFlag.name}, not both`);
  if (flag.value !== undefined) return { secret: flag.value };
  if (fileFlag.value !== undefined) return readSecretFile(`--${fileFlag.name}`, fileFlag.value);
  const file = env[sources.fileVariable];
  if (file) return readSecretFile(sources.fileVariable, file);
  const value = env[sources.variable];
  return value === undefined ? undefined : { secret: value };
}
