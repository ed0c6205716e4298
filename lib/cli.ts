import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { PACKAGE_ROOT } from "./package-root.js";

/** A configuration a process refuses to start with; the message is for the person who started it. */
export class ConfigError extends Error {}

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

/**
 * The process's configuration, or undefined when it should not start: `--version` anywhere in `argv`
 * prints the package's version (before anything is parsed, so it works whatever else is wrong);
 * a ConfigError is printed with the usage and the process exits 2; `--help` prints the usage.
 */
export function configOrExit<C extends { help: boolean }>(name: string, usage: string, parse: () => C, argv: readonly string[] = process.argv.slice(2)): C | undefined {
  if (versionAsked(argv)) {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return undefined;
  }
  let config: C;
  try {
    config = parse();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${name}: ${err.message}\n${usage}\n`);
    process.exit(2);
  }
  if (!config.help) return config;
  process.stdout.write(`${usage}\n`);
  return undefined;
}
