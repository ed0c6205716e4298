import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { consoleRoutes } from "../../../gateway/wire/console-files.js";
import { startListener, type Listener } from "../../../gateway/wire/listener.js";
import { DEFAULT_SOCKET_LIMITS } from "../../../gateway/wire/socket-limits.js";
import { createLogger } from "../../../lib/logger.js";

let listener: Listener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

async function serve(directory: string): Promise<string> {
  listener = await startListener({
    host: "127.0.0.1",
    port: 0,
    token: "console-token",
    maxFrameBytes: 1024,
    limits: DEFAULT_SOCKET_LIMITS,
    allowedHosts: [],
    allowedOrigins: [],
    log: createLogger("silent", "gateway"),
    routes: consoleRoutes(directory),
    accept: () => ({ onFrame: () => {}, onClose: () => {} }),
  });
  return `http://127.0.0.1:${listener.port}`;
}

function builtConsole(): string {
  const directory = mkdtempSync(join(tmpdir(), "console-dist-"));
  writeFileSync(join(directory, "index.html"), "<!doctype html><title>t</title>");
  writeFileSync(join(directory, "console.js"), "export {};");
  writeFileSync(join(directory, "console.css"), "body{}");
  writeFileSync(join(directory, "xterm.css"), ".xterm{}");
  return directory;
}

describe("the console's files", () => {
  it("serve the page without the token, under a strict content security policy and no referrer", async () => {
    const base = await serve(builtConsole());
    const page = await fetch(`${base}/?tkn=whatever`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const policy = page.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe/);
    expect(policy).toContain("connect-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await page.text()).toBe("<!doctype html><title>t</title>");
  });

  it("serve the bundle and stylesheets with their types, and HEAD without a body", async () => {
    const base = await serve(builtConsole());
    expect((await fetch(`${base}/console.js`)).headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await fetch(`${base}/xterm.css`)).headers.get("content-type")).toBe("text/css; charset=utf-8");
    const head = await fetch(`${base}/console.css`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("6");
    expect(await head.text()).toBe("");
  });

  it("say how to build the console when it is not built", async () => {
    const base = await serve(mkdtempSync(join(tmpdir(), "console-empty-")));
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(503);
    expect(await page.text()).toContain("npm run build");
  });

  it("leave every other path and method to the WebSocket endpoint (426)", async () => {
    const base = await serve(builtConsole());
    expect((await fetch(`${base}/index.html`)).status).toBe(426);
    expect((await fetch(`${base}/`, { method: "POST", body: "x" })).status).toBe(426);
  });
});
