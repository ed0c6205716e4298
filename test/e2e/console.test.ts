import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../lib/listen.js";
import { eventually } from "../support/eventually.js";
import { startCuttableProxy, type CuttableProxy } from "../support/cuttable-proxy.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { ROOT, startServiceProcess, type ServiceProcess } from "./service-process.js";

const CHROMIUM = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => path && existsSync(path));
if (!CHROMIUM) console.warn("SKIPPED: the browser console tests need Chromium: apt-get install chromium (or set CHROMIUM_PATH)");

const RUNNER_TOKEN = "console-runner-token";
const GATEWAY_TOKEN = "console-gateway-token";
const WIDE = { width: 1100, height: 640 };
const NARROW = { width: 760, height: 420 };

let runner: RunnerProcess;
let gateway: ServiceProcess;
let gatewayPort: number;
let browser: Browser;
let home: string;

async function startGateway(): Promise<ServiceProcess> {
  return startServiceProcess("gateway/main.ts", ["--port", String(gatewayPort), "--runner", runner.url, "--token", GATEWAY_TOKEN], { RUNNER_TOKEN, HOME: home });
}

describe.skipIf(!CHROMIUM)("the browser console, in Chromium against runner and gateway processes", () => {
  beforeAll(async () => {
    // The test drives the console built from the sources as they are now.
    execFileSync(process.execPath, ["--import", "tsx", "console/build.ts"], { cwd: ROOT, stdio: "ignore" });
    home = mkdtempSync(join(tmpdir(), "console-home-"));
    runner = await startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN], { SHELL: "/bin/sh", HOME: home, ENV: "", PS1: "$ " });
    gatewayPort = await freePort();
    gateway = await startGateway();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await runner?.stop();
  });

  it("opens a terminal, runs a command, follows the window's size, and shows the same screen in a second page", async () => {
    const page = await openConsole(`http://127.0.0.1:${gatewayPort}/?tkn=${GATEWAY_TOKEN}`, WIDE);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    await typeLine(page, "echo hi");
    await screenMatching(page, /^hi\s*$/m);

    await typeLine(page, "stty size | sed 's/^/A=/'");
    const [wideRows, wideCols] = (await screenMatching(page, /^A=(\d+) (\d+)/m)).slice(1).map(Number);
    await page.setViewportSize(NARROW);
    await eventually(async () => !(await page.textContent("#terminal-state"))?.includes(`${wideCols}×${wideRows}`), 5_000);
    await typeLine(page, "stty size | sed 's/^/B=/'");
    const [narrowRows, narrowCols] = (await screenMatching(page, /^B=(\d+) (\d+)/m)).slice(1).map(Number);
    expect(narrowCols).toBeLessThan(wideCols!);
    expect(narrowRows).toBeLessThan(wideRows!);

    const second = await openConsole(page.url(), NARROW);
    expect(await eventually(async () => (await screenLines(second)) === (await screenLines(page)), 10_000)).toBe(true);
    await typeLine(second, "echo from-second");
    await screenMatching(page, /^from-second\s*$/m);
    expect(await eventually(async () => (await screenLines(second)) === (await screenLines(page)), 10_000)).toBe(true);
    await second.close();
    await page.close();
  });

  it("lists terminals with title, claim and state; renames, clears, shows the exit code, and closes", async () => {
    const page = await openConsole(`http://127.0.0.1:${gatewayPort}/?tkn=${GATEWAY_TOKEN}`, WIDE);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    const uri = decodeURIComponent(new URL(page.url()).hash.slice(1));
    const item = page.locator(`li[data-uri="${uri}"]`);
    expect(await item.locator(".meta").textContent()).toBe("running · this page");

    page.once("dialog", (dialog) => void dialog.accept("build box"));
    await page.click("#rename");
    await eventually(async () => (await item.locator(".title").textContent()) === "build box");
    expect(await item.locator(".title").textContent()).toBe("build box");
    expect(await page.textContent("#terminal-title")).toBe("build box");

    await typeLine(page, "echo before-clear");
    await screenMatching(page, /^before-clear/m);
    await page.click("#clear");
    expect(await eventually(async () => !(await screenText(page)).includes("before-clear"))).toBe(true);

    await typeLine(page, "exit 3");
    await eventually(async () => (await item.locator(".meta").textContent())?.startsWith("exited with code 3") ?? false);
    expect(await item.locator(".meta").textContent()).toBe("exited with code 3 · this page");
    expect(await page.textContent("#terminal-state")).toContain("exited with code 3");

    await page.click("#close");
    expect(await eventually(async () => (await item.count()) === 0)).toBe(true);
    expect(await page.isVisible("#placeholder")).toBe(true);
    await page.close();
  });

  it("comes back after its socket drops, with nothing lost or shown twice", async () => {
    const proxy: CuttableProxy = await startCuttableProxy(gatewayPort);
    try {
      const page = await openConsole(`http://127.0.0.1:${proxy.port}/?tkn=${GATEWAY_TOKEN}`, WIDE);
      await page.click("#new-terminal");
      await screenMatching(page, /^\$\s*$/m);
      await typeLine(page, "echo before-drop; sleep 1; echo during-drop");
      await screenMatching(page, /^before-drop/m);
      const accepted = proxy.accepted;
      proxy.cut();
      await screenMatching(page, /^during-drop\s*$/m);
      expect(proxy.accepted).toBeGreaterThan(accepted);
      await eventually(async () => (await page.textContent("#connection")) === "connected");
      const text = await screenText(page);
      expect(text.match(/^during-drop/gm)).toHaveLength(1);
      expect(text.match(/^before-drop/gm)).toHaveLength(1);
      await typeLine(page, "echo after-drop");
      await screenMatching(page, /^after-drop/m);
      await page.close();
    } finally {
      await proxy.close();
    }
  });

  it("shows the same screen after the gateway restarts, and the terminal still answers", async () => {
    const page = await openConsole(`http://127.0.0.1:${gatewayPort}/?tkn=${GATEWAY_TOKEN}`, WIDE);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    await typeLine(page, "echo before-restart");
    await screenMatching(page, /^before-restart/m);
    const before = await screenLines(page);
    await gateway.stop();
    await eventually(async () => (await page.textContent("#connection"))?.includes("reconnecting") ?? false);
    gateway = await startGateway();
    expect(await eventually(async () => (await page.textContent("#connection")) === "connected", 15_000)).toBe(true);
    expect(await eventually(async () => (await screenLines(page)) === before, 5_000)).toBe(true);
    await typeLine(page, "echo after-restart");
    await screenMatching(page, /^after-restart/m);
    await page.close();
  });

  it("never writes the connection token to either service's log", () => {
    expect(gateway.stderrLines.join("\n")).not.toContain(GATEWAY_TOKEN);
    expect(runner.stderrLines.join("\n")).not.toContain(GATEWAY_TOKEN);
  });
});

async function openConsole(url: string, viewport: { width: number; height: number }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.goto(url);
  if (!(await eventually(async () => (await page.textContent("#connection")) === "connected", 10_000))) {
    throw new Error(`the console did not connect: ${await page.textContent("#connection")} ${errors.join("; ")}`);
  }
  return page;
}

async function typeLine(page: Page, line: string): Promise<void> {
  await page.click("#screen");
  await page.keyboard.type(line);
  await page.keyboard.press("Enter");
}

/** The rendered screen as text (xterm draws spaces as no-break spaces). */
async function screenText(page: Page): Promise<string> {
  return ((await page.locator(".xterm-rows").innerText()) ?? "").replace(/\u00a0/g, " ");
}

/** The screen's lines without trailing blanks, for comparing two pages. */
async function screenLines(page: Page): Promise<string> {
  return (await screenText(page))
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .trimEnd();
}

/** Waits until the screen matches and returns the match; fails showing the screen. */
async function screenMatching(page: Page, pattern: RegExp, ms = 10_000): Promise<RegExpMatchArray> {
  let match: RegExpMatchArray | null = null;
  await eventually(async () => (match = [...(await screenText(page)).matchAll(new RegExp(pattern.source, `${pattern.flags}g`))].at(-1) ?? null) !== null, ms);
  if (!match) throw new Error(`the screen never matched ${pattern}:\n${await screenText(page)}`);
  return match;
}
