import type { ParseArgsConfig } from "node:util";
import { ConfigError } from "../lib/cli.js";

/** A process's flags as parseArgs describes them. */
type FlagTable = NonNullable<ParseArgsConfig["options"]>;

/** The two processes `npm start` runs, and the flags of each it sets itself (they cannot be passed on). */
export interface Children {
  runner: { flags: FlagTable; managed: readonly string[] };
  gateway: { flags: FlagTable; managed: readonly string[] };
}

/** The command line split: the launcher's own words, and the flags (with their values) for each child. */
export interface RoutedFlags {
  own: string[];
  runner: string[];
  gateway: string[];
}

type Child = keyof Children;

/**
 * Splits `npm start`'s arguments: `--runner.FLAG` and `--gateway.FLAG` go to that child; a bare flag
 * goes to the launcher when it is one of `own`, else to the one child that has it (`--allow-run-as`
 * to the runner, `--users` to the gateway); a flag both children have must say which it is for. A
 * flag the launcher sets itself, or one neither child has, is a ConfigError naming the way out.
 */
export function routeFlags(argv: readonly string[], own: FlagTable, children: Children): RoutedFlags {
  const routed: RoutedFlags = { own: [], runner: [], gateway: [] };
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const match = /^--(?:(runner|gateway)\.)?([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(word);
    if (!match) throw new ConfigError(`unexpected argument "${word}"`);
    const [, prefix, name, inline] = match as unknown as [string, Child | undefined, string, string | undefined];
    const target: Child | "own" = prefix ?? (Object.hasOwn(own, name) ? "own" : childHaving(name, children));
    const table = target === "own" ? own : children[target].flags;
    const option = Object.hasOwn(table, name) ? table[name]! : undefined;
    if (!option) throw new ConfigError(`the ${target} has no --${name} flag`);
    if (target !== "own" && children[target].managed.includes(name)) throw new ConfigError(`npm start sets the ${target}'s --${name} itself; see npm start --help`);
    const words = [`--${name}`];
    if (option.type === "string") {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new ConfigError(`--${prefix ? `${prefix}.` : ""}${name} needs a value`);
      words.push(value);
    } else if (inline !== undefined) {
      throw new ConfigError(`--${name} takes no value`);
    }
    routed[target].push(...words);
  }
  return routed;
}

function childHaving(name: string, children: Children): Child {
  const having = (["runner", "gateway"] as const).filter((child) => Object.hasOwn(children[child].flags, name));
  if (having.length === 0) throw new ConfigError(`neither the runner nor the gateway has a --${name} flag`);
  if (having.length > 1) throw new ConfigError(`both the runner and the gateway have --${name}: say --runner.${name} or --gateway.${name}`);
  return having[0]!;
}
