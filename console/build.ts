import { copyFile, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** Bundles the browser console into dist/console (where the gateway serves it from), with xterm's stylesheet beside it. */
const CONSOLE_DIST = fileURLToPath(new URL("../dist/console/", import.meta.url));
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

await mkdir(CONSOLE_DIST, { recursive: true });
await build({
  entryPoints: [join(here, "main.ts")],
  outfile: join(CONSOLE_DIST, "console.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  // The bundled libraries' licence notices travel with the bundle.
  legalComments: "eof",
  logLevel: "warning",
});
await copyFile(join(here, "index.html"), join(CONSOLE_DIST, "index.html"));
await copyFile(join(here, "console.css"), join(CONSOLE_DIST, "console.css"));
await copyFile(require.resolve("@xterm/xterm/css/xterm.css"), join(CONSOLE_DIST, "xterm.css"));
console.log(`console built in ${CONSOLE_DIST}`);
