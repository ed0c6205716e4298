import { createServer } from "node:http";
import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { listen } from "../../lib/listen.js";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { CHROMIUM, connected, openConsole, screenMatching, typeLine, uncovered, useConsoleServices } from "./console-page.js";

const VIEWPORT = { width: 1000, height: 560 };
/** Twelve underscores at 14 px are about 100 CSS px wide: a line of at least this many CSS px is them, drawn. */
const UNDERSCORES_MIN_WIDTH_PX = 80;

describe.skipIf(!CHROMIUM)("what the browser console draws, in Chromium against runner and gateway processes", () => {
  const services = useConsoleServices();

  it.each([1, 2])("draws underscores inside their row at device-pixel ratio %i with the default monospace", async (ratio) => {
    const page = await openConsole(services.browser, services.url, VIEWPORT, ratio);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    await typeLine(page, "echo ____________");
    await screenMatching(page, /^_{12}\s*$/m);
    const row = page.locator(".xterm-rows > div", { hasText: /^_{12}/ });
    const picture = await page.screenshot({ clip: (await row.boundingBox())!, animations: "disabled" });
    const litPerLine = await litPixelsPerLine(services.browser, picture);
    // Some line of device pixels in the row is lit along the underscores' whole width.
    expect(Math.max(...litPerLine), `lit pixels per line of the row: ${litPerLine.join(" ")}`).toBeGreaterThanOrEqual(UNDERSCORES_MIN_WIDTH_PX * ratio);
    await page.close();
  });

  it("keeps the header on one line with every button in view in a narrow window", async () => {
    const page = await openConsole(services.browser, services.url, { width: 700, height: 400 });
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    const header = (await page.locator("#terminal-header").boundingBox())!;
    for (const button of ["#rename", "#clear", "#close"]) {
      const box = (await page.locator(button).boundingBox())!;
      expect(box.x + box.width, button).toBeLessThanOrEqual(header.x + header.width);
      expect(await uncovered(page, button), button).toBe(true);
    }
    expect(header.height).toBeLessThan(2 * (await page.locator("#rename").boundingBox())!.height);
    await page.close();
  });

  it("opens a web address in the output in a new page when it is clicked", async () => {
    const site = createServer((_, response) => response.writeHead(200, { "content-type": "text/plain" }).end("linked"));
    const { port } = await listen(site, 0, "127.0.0.1");
    try {
      const page = await openConsole(services.browser, services.url, VIEWPORT);
      await page.click("#new-terminal");
      await screenMatching(page, /^\$\s*$/m);
      await typeLine(page, `echo http://127.0.0.1:${port}/linked-$((6*7))`);
      await screenMatching(page, /^http:\S+\/linked-42\s*$/m);
      const row = (await page.locator(".xterm-rows > div", { hasText: /^http:/ }).boundingBox())!;
      await page.mouse.move(row.x + 30, row.y + row.height / 2);
      const [opened] = await Promise.all([page.waitForEvent("popup", { timeout: 10_000 }), page.mouse.click(row.x + 30, row.y + row.height / 2)]);
      expect(await eventually(() => opened.url() === `http://127.0.0.1:${port}/linked-42`)).toBe(true);
      await opened.close();
      await page.close();
    } finally {
      site.close();
    }
  });
});

/** How many light pixels each line of a PNG has (decoded by the browser). */
async function litPixelsPerLine(browser: Browser, png: Buffer): Promise<number[]> {
  const page: Page = await browser.newPage();
  try {
    return await page.evaluate(async (base64) => {
      // Runs in the page: its DOM's names, which the tests' Node typings do not have.
      const { createImageBitmap, OffscreenCanvas } = globalThis as any;
      const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${base64}`)).blob());
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const context = canvas.getContext("2d");
      context.drawImage(bitmap, 0, 0);
      const { data, width, height } = context.getImageData(0, 0, bitmap.width, bitmap.height) as { data: Uint8ClampedArray; width: number; height: number };
      const lines: number[] = [];
      for (let y = 0; y < height; y++) {
        let lit = 0;
        for (let x = 0; x < width; x++) {
          const at = (y * width + x) * 4;
          if (data[at]! + data[at + 1]! + data[at + 2]! > 3 * 128) lit++;
        }
        lines.push(lit);
      }
      return lines;
    }, png.toString("base64"));
  } finally {
    await page.close();
  }
}

describe.skipIf(!CHROMIUM)("the browser console on bash with the runner's shell integration", () => {
  const services = useConsoleServices("/bin/bash");

  it("marks each command with how it ended, shows the working directory, and keeps the marks over a reload", async () => {
    const page = await openConsole(services.browser, services.url, VIEWPORT);
    await page.click("#new-terminal");
    await screenMatching(page, /[#$]\s*$/m);
    await typeLine(page, "cd /tmp");
    expect(await eventually(async () => (await page.textContent("#terminal-cwd")) === "/tmp")).toBe(true);
    await typeLine(page, "false");
    await typeLine(page, "echo after-false");
    await screenMatching(page, /^after-false\s*$/m);
    for (const shown of [page, await reloaded(page)]) {
      const failed = shown.locator(".command-mark.failed");
      expect(await eventually(async () => (await failed.count()) === 1)).toBe(true);
      expect(await failed.getAttribute("title")).toBe("false\nexit status 1");
      expect(await shown.locator(".command-mark.succeeded").count()).toBe(2);
      // The mark stands beside the command's row, inside the screen's area.
      const mark = (await failed.boundingBox())!;
      const row = (await shown.locator(".xterm-rows > div", { hasText: /[#$] false\s*$/ }).boundingBox())!;
      expect(Math.abs(mark.y - row.y)).toBeLessThan(2);
      expect(mark.x).toBeGreaterThanOrEqual((await shown.locator("#screen").boundingBox())!.x);
      expect(mark.x + mark.width).toBeLessThanOrEqual(row.x);
    }
    await page.close();
  });

  it("finds text in the terminal and highlights it, from the keyboard", async () => {
    const page = await openConsole(services.browser, services.url, VIEWPORT);
    await page.click("#new-terminal");
    await screenMatching(page, /[#$]\s*$/m);
    await typeLine(page, "echo needle-$((40+2)) hay needle-$((40+3))");
    await screenMatching(page, /^needle-42 hay needle-43\s*$/m);
    // From the terminal, by keyboard alone: Ctrl+Shift+F, the text, Enter, Enter, Escape.
    await page.keyboard.press("Control+Shift+F");
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.id)).toBe("find");
    await page.keyboard.type("needle-4");
    await page.keyboard.press("Enter");
    expect(await eventually(async () => (await page.textContent("#find-count")) === "1 of 2")).toBe(true);
    // Both matches are highlighted (the active one has a highlight of its own on top).
    expect(await eventually(async () => (await page.locator(".xterm-find-result-decoration").count()) >= 2)).toBe(true);
    await page.keyboard.press("Enter");
    expect(await eventually(async () => (await page.textContent("#find-count")) === "2 of 2")).toBe(true);
    await page.keyboard.press("Escape");
    expect(await eventually(async () => (await page.locator(".xterm-find-result-decoration").count()) === 0)).toBe(true);
    await page.keyboard.type("echo back-$((6*7))");
    await page.keyboard.press("Enter");
    await screenMatching(page, /^back-42\s*$/m);
    await page.close();
  });

  it("shows who holds a terminal by the name its client gave the gateway, for terminals claimed before and after the page opened", async () => {
    const gatewayUrl = services.url.replace(/^http/, "ws");
    /** A client that names itself (or not) in `initialize` and opens a terminal it holds. */
    const holder = async (clientInfo: unknown): Promise<{ client: AhpTestClient; clientId: string; uri: string }> => {
      const clientId = `holder-${crypto.randomUUID()}`;
      const client = await AhpTestClient.connect(gatewayUrl);
      await client.call("initialize", { protocolVersions: ["1.1.0"], clientId, clientInfo, initialSubscriptions: [] });
      const uri = `ahp-terminal:/${crypto.randomUUID()}`;
      await client.call("createTerminal", { channel: uri });
      return { client, clientId, uri };
    };
    const meta = (page: Page, uri: string) => page.locator(`li[data-uri="${uri}"] .meta`);
    const vscode = await holder({ name: "VS Code", version: "1.96.0" });
    const nameless = await holder(undefined);
    const page = await openConsole(services.browser, services.url, VIEWPORT);
    expect(await eventually(async () => (await meta(page, vscode.uri).textContent()) === "running · VS Code")).toBe(true);
    expect(await meta(page, nameless.uri).textContent()).toBe(`running · client ${nameless.clientId}`);
    // A holder that appears later is asked about too.
    const later = await holder({ name: "Neovim AHP" });
    expect(await eventually(async () => (await meta(page, later.uri).textContent()) === "running · Neovim AHP")).toBe(true);
    await page.click(`li[data-uri="${vscode.uri}"]`);
    expect(await eventually(async () => (await page.textContent("#terminal-state"))?.includes("· VS Code") ?? false)).toBe(true);
    for (const { client, uri } of [vscode, nameless, later]) {
      await client.call("disposeTerminal", { channel: uri });
      client.close();
    }
    await page.close();
  });
});

/** The same page after a reload, connected again. */
async function reloaded(page: Page): Promise<Page> {
  await page.reload();
  await connected(page);
  return page;
}
