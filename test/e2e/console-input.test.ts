import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { startCuttableProxy } from "../support/cuttable-proxy.js";
import { CHROMIUM, connected, GATEWAY_TOKEN, openConsole, screenLines, screenMatching, screenText, useConsoleServices } from "./console-page.js";

const VIEWPORT = { width: 1000, height: 560 };

describe.skipIf(!CHROMIUM)("the browser console's keyboard, in Chromium against runner and gateway processes", () => {
  const services = useConsoleServices();

  it("types into a terminal as soon as it is created, after a reload and in a second page, without a click", async () => {
    const page = await openConsole(services.browser, services.url, VIEWPORT);
    const before = await terminalsListed(page);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    // Typed without clicking the terminal: a Space or Enter landing on the button would open yet another terminal.
    await typeUnclicked(page, "echo typed-$((6*7))");
    await screenMatching(page, /^typed-42\s*$/m);
    expect(await terminalsListed(page)).toBe(before + 1);

    await page.reload();
    await connected(page);
    await screenMatching(page, /^typed-42\s*$/m);
    await typeUnclicked(page, "echo typed-$((6*8))");
    await screenMatching(page, /^typed-48\s*$/m);

    const second = await openConsole(services.browser, page.url(), VIEWPORT);
    await screenMatching(second, /^typed-48\s*$/m);
    // The terminal is held by the first page: the second says so without showing its random client id.
    expect(await second.textContent("#terminal-state")).toContain("another console page");
    await typeUnclicked(second, "echo typed-$((6*9))");
    await screenMatching(second, /^typed-54\s*$/m);
    await screenMatching(page, /^typed-54\s*$/m);
    expect(await terminalsListed(page)).toBe(before + 1);
    await second.close();
    await page.close();
  });

  it("types into a terminal picked in the sidebar, by mouse or keyboard, without a click in it", async () => {
    const page = await openConsole(services.browser, services.url, VIEWPORT);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    const first = decodeURIComponent(new URL(page.url()).hash.slice(1));
    await page.click("#new-terminal");
    expect(await eventually(() => decodeURIComponent(new URL(page.url()).hash.slice(1)) !== first)).toBe(true);
    const second = decodeURIComponent(new URL(page.url()).hash.slice(1));
    await screenMatching(page, /^\$\s*$/m);

    await page.click(`li[data-uri="${first}"]`);
    expect(await eventually(async () => (await page.locator("li.active").getAttribute("data-uri")) === first)).toBe(true);
    await typeUnclicked(page, "echo picked-$((6*7))");
    await screenMatching(page, /^picked-42\s*$/m);

    await page.focus(`li[data-uri="${second}"]`);
    await page.keyboard.press("Enter");
    expect(await eventually(async () => (await page.locator("li.active").getAttribute("data-uri")) === second)).toBe(true);
    await typeUnclicked(page, "echo picked-$((6*8))");
    await screenMatching(page, /^picked-48\s*$/m);
    // The Enter that picked the terminal did not reach it: no empty command line above this one.
    expect(await eventually(async () => (await screenLines(page)) === "$ echo picked-$((6*8))\npicked-48\n$")).toBe(true);
    await page.close();
  });

  it("keeps what is typed while the gateway is down, says so, and sends it in order once it is back", async () => {
    const page = await openConsole(services.browser, services.url, VIEWPORT);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    await services.gateway.stop("SIGKILL");
    expect(await eventually(async () => (await page.textContent("#connection"))?.includes("reconnecting") ?? false)).toBe(true);
    await typeUnclicked(page, "echo typed-during-outage");
    const line = "echo typed-during-outage\r";
    expect(await page.textContent("#connection")).toContain(`${line.length} typed characters waiting`);

    await services.startGateway();
    await connected(page);
    await screenMatching(page, /^typed-during-outage\s*$/m);
    // Sent once, in order: the echoed command line is whole and the output appears once.
    const text = await page.locator(".xterm-rows").innerText();
    expect(text.match(/^typed-during-outage\s*$/gm)).toHaveLength(1);
    expect(text).toContain("echo typed-during-outage");
    await page.close();
  });

  it("sends keys again after a reconnect when the network swallowed them unnoticed, and runs nothing twice", async () => {
    const proxy = await startCuttableProxy(Number(new URL(services.url).port));
    try {
      const page = await openConsole(services.browser, `http://127.0.0.1:${proxy.port}/?tkn=${GATEWAY_TOKEN}`, VIEWPORT);
      await page.click("#new-terminal");
      await screenMatching(page, /^\$\s*$/m);
      // What the page sends goes nowhere, and the page cannot tell until the connection is cut.
      proxy.stall(true);
      await typeUnclicked(page, "echo swallowed-$((6*7))");
      expect(await page.textContent("#connection")).toBe("connected");
      proxy.cut();
      await screenMatching(page, /^swallowed-42\s*$/m);

      // Now the way back dies: the keys reach the shell, their echoes never reach the page.
      await connected(page);
      proxy.stall(false);
      await typeUnclicked(page, "echo twice-$((6*7))");
      proxy.cut();
      await screenMatching(page, /^twice-42\s*$/m);
      await typeUnclicked(page, "echo after-$((6*7))");
      await screenMatching(page, /^after-42\s*$/m);
      const text = await screenText(page);
      expect(text.match(/^swallowed-42\s*$/gm)).toHaveLength(1);
      expect(text.match(/^twice-42\s*$/gm)).toHaveLength(1);
      await page.close();
    } finally {
      await proxy.close();
    }
  });

  it("keeps at most its bound while the gateway is down, says how much more it dropped, and sends only what came before", async () => {
    const page = await openConsole(services.browser, services.url, VIEWPORT);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    await services.gateway.stop("SIGKILL");
    expect(await eventually(async () => (await page.textContent("#connection"))?.includes("reconnecting") ?? false)).toBe(true);
    await page.keyboard.type("echo kept-$((6*7))");
    // A paste larger than what may wait: refused, and so is everything after it until the reconnect.
    await page.keyboard.insertText("x".repeat(5_000));
    await page.keyboard.press("Enter");
    const badge = await page.textContent("#connection");
    expect(badge).toContain("18 typed characters waiting");
    expect(badge).toContain("5001 more not kept (at most 4096 wait)");

    await services.startGateway();
    await connected(page);
    expect(await eventually(async () => (await page.textContent("#notice"))?.startsWith("5001 characters typed while disconnected were not sent") ?? false)).toBe(true);
    // What was kept reached the shell's line, without the Enter that came after the refused paste.
    await screenMatching(page, /^\$ echo kept-\$\(\(6\*7\)\)\s*$/m);
    await page.keyboard.press("Enter");
    await screenMatching(page, /^kept-42\s*$/m);
    await page.close();
  });
});

/** Types a line with the keyboard alone, wherever the focus is. */
async function typeUnclicked(page: Page, line: string): Promise<void> {
  await page.keyboard.type(line);
  await page.keyboard.press("Enter");
}

/** How many terminals the sidebar lists. */
function terminalsListed(page: Page): Promise<number> {
  return page.locator("#terminal-list li").count();
}
