import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "node:http";
import { freePort, listen } from "../../lib/listen.js";
import { eventually } from "../support/eventually.js";
import { startCuttableProxy, type CuttableProxy } from "../support/cuttable-proxy.js";
import { CHROMIUM, GATEWAY_TOKEN, launchBrowser, openConsole as openConsolePage, screenLines, screenMatching, screenText, typeLine, uncovered } from "./console-page.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { ROOT, startServiceProcess, type ServiceProcess } from "./service-process.js";

const RUNNER_TOKEN = "console-runner-token";
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
    browser = await launchBrowser();
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
    expect(await eventually(async () => !(await page.textContent("#terminal-state"))?.includes(`${wideCols}×${wideRows}`), 5_000)).toBe(true);
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

  it("lets the page used last decide the size, so a smaller page is never left cut off", async () => {
    const wide = await openConsole(`http://127.0.0.1:${gatewayPort}/?tkn=${GATEWAY_TOKEN}`, NARROW);
    await wide.click("#new-terminal");
    await screenMatching(wide, /^\$\s*$/m);
    const narrow = await openConsole(wide.url(), NARROW);
    await screenMatching(narrow, /^\$\s*$/m);
    // The first page's window grows: the terminal follows it, and is now larger than the other page's window.
    await wide.setViewportSize(WIDE);
    await typeLine(wide, "stty size | sed 's/^/W=/'");
    const [wideRows, wideCols] = (await screenMatching(wide, /^W=(\d+) (\d+)/m)).slice(1).map(Number);
    expect(await eventually(async () => (await narrow.textContent("#terminal-state"))?.includes(`${wideCols}×${wideRows}`) ?? false, 5_000)).toBe(true);
    expect(await fitsItsWindow(narrow)).toBe(false);
    // Typing in the smaller page takes the terminal to that page's size: nothing of it is cut off any more.
    await typeLine(narrow, "stty size | sed 's/^/N=/'");
    const [narrowRows, narrowCols] = (await screenMatching(narrow, /^N=(\d+) (\d+)/m)).slice(1).map(Number);
    expect(narrowCols).toBeLessThan(wideCols!);
    expect(narrowRows).toBeLessThan(wideRows!);
    expect(await eventually(() => fitsItsWindow(narrow), 5_000)).toBe(true);
    // And back: the wide page, used again, takes it back to its own size.
    await typeLine(wide, "stty size | sed 's/^/X=/'");
    expect((await screenMatching(wide, /^X=(\d+) (\d+)/m)).slice(1).map(Number)).toEqual([wideRows, wideCols]);
    await narrow.close();
    await wide.close();
  });

  it("shows no terminal actions without a terminal, and says a terminal is starting until its first output", async () => {
    const page = await openConsole(`http://127.0.0.1:${gatewayPort}/?tkn=${GATEWAY_TOKEN}`, WIDE);
    for (const button of ["#rename", "#clear", "#close"]) expect(await page.isVisible(button), button).toBe(false);
    expect(await page.isVisible("#placeholder")).toBe(true);
    await page.close();

    // A shell that takes a while to print anything, behind a runner and gateway of its own.
    const slowShell = join(home, "slow-sh");
    writeFileSync(slowShell, "#!/bin/sh\nsleep 2\nexec /bin/sh \"$@\"\n", { mode: 0o755 });
    const slowRunner = await startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN], { SHELL: slowShell, HOME: home, ENV: "", PS1: "$ " });
    const slowGateway = await startServiceProcess("gateway/main.ts", ["--port", "0", "--runner", slowRunner.url, "--token", GATEWAY_TOKEN], { RUNNER_TOKEN, HOME: home });
    try {
      const address = new URL(slowGateway.firstLine);
      const slow = await openConsole(`http://127.0.0.1:${address.port}/?tkn=${GATEWAY_TOKEN}`, WIDE);
      await slow.click("#new-terminal");
      expect(await eventually(async () => (await slow.textContent("#terminal-state"))?.startsWith("starting") ?? false, 5_000)).toBe(true);
      expect(await slow.isVisible("#starting")).toBe(true);
      expect(await uncovered(slow, "#starting"), "the notice is not hidden under the terminal").toBe(true);
      for (const button of ["#rename", "#clear", "#close"]) expect(await slow.isVisible(button), button).toBe(true);
      await screenMatching(slow, /^\$\s*$/m);
      expect(await eventually(async () => (await slow.textContent("#terminal-state"))?.startsWith("running") ?? false, 5_000)).toBe(true);
      expect(await slow.isVisible("#starting")).toBe(false);
      await slow.close();
    } finally {
      await slowGateway.stop();
      await slowRunner.stop();
    }
  });

  it("lists terminals with title, claim and state; renames, clears, shows the exit code, and closes", async () => {
    const page = await openConsole(`http://127.0.0.1:${gatewayPort}/?tkn=${GATEWAY_TOKEN}`, WIDE);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    const uri = decodeURIComponent(new URL(page.url()).hash.slice(1));
    const item = page.locator(`li[data-uri="${uri}"]`);
    expect(await item.locator(".meta").textContent()).toBe("running · this page");

    // A long title is cut short in its row: neither the row nor the sidebar grows.
    const rowHeight = (await item.boundingBox())!.height;
    const sidebarWidth = (await page.locator("aside").boundingBox())!.width;
    page.once("dialog", (dialog) => void dialog.accept(`a very long title ${"x".repeat(300)}`));
    await page.click("#rename");
    expect(await eventually(async () => (await item.locator(".title").textContent())?.startsWith("a very long title") ?? false)).toBe(true);
    expect((await item.boundingBox())!.height).toBe(rowHeight);
    expect((await page.locator("aside").boundingBox())!.width).toBe(sidebarWidth);

    page.once("dialog", (dialog) => void dialog.accept("build box"));
    await page.click("#rename");
    expect(await eventually(async () => (await item.locator(".title").textContent()) === "build box")).toBe(true);
    expect(await page.textContent("#terminal-title")).toBe("build box");

    await typeLine(page, "echo before-clear");
    await screenMatching(page, /^before-clear/m);
    await page.click("#clear");
    expect(await eventually(async () => !(await screenText(page)).includes("before-clear"))).toBe(true);

    await typeLine(page, "exit 3");
    expect(await eventually(async () => (await item.locator(".meta").textContent())?.startsWith("exited with code 3") ?? false)).toBe(true);
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
      expect(await eventually(async () => (await page.textContent("#connection")) === "connected")).toBe(true);
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
    expect(await eventually(async () => (await page.textContent("#connection"))?.includes("reconnecting") ?? false)).toBe(true);
    gateway = await startGateway();
    expect(await eventually(async () => (await page.textContent("#connection")) === "connected", 15_000)).toBe(true);
    expect(await eventually(async () => (await screenLines(page)) === before, 5_000)).toBe(true);
    await typeLine(page, "echo after-restart");
    await screenMatching(page, /^after-restart/m);
    await page.close();
  });

  it("lets the console's own page open its WebSocket, and no page of another origin, even one that knows the token", async () => {
    const url = `ws://127.0.0.1:${gatewayPort}/?tkn=${GATEWAY_TOKEN}`;
    const tryOpen = (page: Page): Promise<string> =>
      page.evaluate(
        (target) =>
          new Promise<string>((resolve) => {
            const socket = new WebSocket(target);
            socket.onopen = () => (socket.close(), resolve("open"));
            socket.onclose = (event) => resolve(`closed ${event.code}`);
          }),
        url,
      );
    const own = await openConsole(`http://127.0.0.1:${gatewayPort}/?tkn=${GATEWAY_TOKEN}`, WIDE);
    expect(await tryOpen(own)).toBe("open");
    // Served under a loopback name, it connects back to that name.
    await (await openConsole(`http://localhost:${gatewayPort}/?tkn=${GATEWAY_TOKEN}`, WIDE)).close();
    // Another site's page: any other origin (here another port of this machine).
    const site = createServer((_, response) => response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>elsewhere</title>"));
    const { port } = await listen(site, 0, "127.0.0.1");
    try {
      const elsewhere = await browser.newPage();
      await elsewhere.goto(`http://127.0.0.1:${port}/`);
      expect(await tryOpen(elsewhere)).toBe("closed 1006");
      await elsewhere.close();
    } finally {
      site.close();
    }
    expect(gateway.stderrLines.some((line) => line.includes("may not connect (add it to --allowed-origins)"))).toBe(true);
    await own.close();
  });

  it("never writes the connection token to either service's log", () => {
    expect(gateway.stderrLines.join("\n")).not.toContain(GATEWAY_TOKEN);
    expect(runner.stderrLines.join("\n")).not.toContain(GATEWAY_TOKEN);
  });
});

function openConsole(url: string, viewport: { width: number; height: number }): Promise<Page> {
  return openConsolePage(browser, url, viewport);
}

/** True when the terminal's whole screen fits in the page's screen area (nothing cut off or scrolled away). */
async function fitsItsWindow(page: Page): Promise<boolean> {
  const area = (await page.locator("#screen").boundingBox())!;
  const grid = (await page.locator(".xterm-screen").boundingBox())!;
  return grid.x + grid.width <= area.x + area.width + 1 && grid.y + grid.height <= area.y + area.height + 1;
}
