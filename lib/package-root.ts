import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package's root directory (the one holding package.json), found from this file, so assets
 * resolve the same whether the code runs from its TypeScript sources or compiled into dist/app.
 */
export const PACKAGE_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** The root of the tree this code runs from: the repository for the sources, dist/app when compiled. */
export const CODE_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** True when this code was compiled to JavaScript rather than run from its TypeScript sources. */
export const RUNS_COMPILED = import.meta.url.endsWith(".js");

function findRoot(directory: string): string {
  for (let current = directory; ; current = dirname(current)) {
    if (existsSync(join(current, "package.json"))) return current;
    if (dirname(current) === current) throw new Error(`no package.json above ${directory}`);
  }
}
