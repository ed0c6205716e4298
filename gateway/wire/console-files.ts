import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../lib/package-root.js";
import type { HttpReply } from "./listener.js";

/** Where `npm run build` puts the console. */
const CONSOLE_DIST = join(PACKAGE_ROOT, "dist", "console");

/**
 * The page's policy: its own scripts only (no inline or eval'd code), sockets back to this origin
 * only, no framing, no forms, no referrer (the page's address carries the token). Inline styles
 * stay allowed because xterm sizes its cells with them.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-cache",
};

const FILES: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/console.js": { file: "console.js", type: "text/javascript; charset=utf-8" },
  "/console.css": { file: "console.css", type: "text/css; charset=utf-8" },
  "/xterm.css": { file: "xterm.css", type: "text/css; charset=utf-8" },
};

/**
 * The browser console's routes: its page at `/` and the bundle beside it, read from `directory`
 * (built by `npm run build`). If the bundle is missing, `/` says how to build it (503).
 */
export function consoleRoutes(directory = CONSOLE_DIST): Record<string, () => Promise<HttpReply>> {
  const cache = new Map<string, Buffer>();
  const routes: Record<string, () => Promise<HttpReply>> = {};
  for (const [path, { file, type }] of Object.entries(FILES)) {
    routes[path] = async () => {
      let body = cache.get(file);
      if (!body) {
        body = await readFile(`${directory}/${file}`).catch(() => undefined);
        if (!body) return { status: 503, body: "The console is not built: run npm run build (npm install does it too).\n", headers: PAGE_HEADERS };
        cache.set(file, body);
      }
      return { status: 200, body, headers: { ...PAGE_HEADERS, "content-type": type } };
    };
  }
  return routes;
}
