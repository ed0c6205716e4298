import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { EXIT_CODES, type ExitKind } from "./exit-codes.js";
import { PACKAGE_ROOT } from "./package-root.js";

/**
 * A reason a process refuses to start: a flag, a file or an address it cannot use. The message is
 * for the person who started it, naming the flag or file and what to do; `kind` picks the exit code.
 */
export class ConfigError extends Error {
  constructor(
    message: string,
    readonly kind: ExitKind = "usage",
  ) {
    super(message);
  }
}

/** Parses flags strictly (unknown flags and positionals are errors), turning parse failures into ConfigError. */
export function parseFlags<O extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals: false, options }).values;
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** An integer flag within [min, max]; ConfigError naming the flag otherwise. */
export function integerFlag(name: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`--${name} must be an integer from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

/** The version in package.json: what `--version` prints, for every binary of the package alike. */
export const PACKAGE_VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;

/** True when `--version` is among the flags, before any `--` (words after it belong to a command being run). */
export function versionAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).includes("--version");
}

/** True when `argv` asks for debug (or trace) logging with `--log-level`, before any `--`: startup failures then show their stack. */
export function debugAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  const flags = end < 0 ? argv : argv.slice(0, end);
  let level: string | undefined;
  flags.forEach((word, i) => {
    if (word === "--log-level") level = flags[i + 1];
    else if (word.startsWith("--log-level=")) level = word.slice("--log-level=".length);
  });
  return level === "debug" || level === "trace";
}

/**
 * The process's configuration, or undefined when it should not start: `--version` anywhere in `argv`
 * prints the package's version (before anything is parsed, so it works whatever else is wrong);
 * `--help` prints the usage. A ConfigError propagates, for `exitOnStartupFailure` to report.
 */
export function configOrExit<C extends { help: boolean }>(usage: string, parse: () => C, argv: readonly string[] = process.argv.slice(2)): C | undefined {
  if (versionAsked(argv)) {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return undefined;
  }
  const config = parse();
  if (!config.help) return config;
  process.stdout.write(`${usage}\n`);
  return undefined;
}

/**
 * Runs a process's start-up, and when it fails, says so on one line of stderr (`NAME: what is wrong
 * and what to do`) and exits with the code of its kind (EXIT_CODES): a ConfigError names its flag
 * or file; anything else is unexpected (exit 1). The stack follows only with `--log-level debug`.
 */
export async function exitOnStartupFailure(name: string, start: () => Promise<void>, argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  try {
    await start();
  } catch (err) {
    const known = err instanceof ConfigError;
    const message = known ? err.message : `could not start: ${err instanceof Error ? err.message : String(err)} (--log-level debug shows where)`;
    const hint = known && err.kind === "usage" ? " (--help lists the flags)" : "";
    process.stderr.write(`${name}: ${message}${hint}\n`);
    if (debugAsked(argv) && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    process.exit(EXIT_CODES[known ? err.kind : "unexpected"]);
  }
}
