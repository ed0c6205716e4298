import { copyFile, mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** Bundles the browser console into dist/console (where the gateway serves it from), with xterm's stylesheet beside it. */
const CONSOLE_DIST = fileURLToPath(new URL("../dist/console/", import.meta.url));
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

await mkdir(CONSOLE_DIST, { recursive: true });
// Built beside the served copy and renamed into it file by file: a gateway reading the console while
// another build runs (test files run in parallel) gets the old file or the new one, never half of one.
const staging = await mkdtemp(join(CONSOLE_DIST, "..", "console-build-"));
await build({
  entryPoints: [join(here, "main.ts")],
  outfile: join(staging, "console.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  // The bundled libraries' licence notices travel with the bundle.
  legalComments: "eof",
  logLevel: "warning",
});
await copyFile(join(here, "index.html"), join(staging, "index.html"));
await copyFile(join(here, "console.css"), join(staging, "console.css"));
await copyFile(require.resolve("@xterm/xterm/css/xterm.css"), join(staging, "xterm.css"));
for (const file of await readdir(staging)) await rename(join(staging, file), join(CONSOLE_DIST, file));
await rm(staging, { recursive: true });
console.log(`console built in ${CONSOLE_DIST}`);
