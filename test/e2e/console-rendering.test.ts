import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { CHROMIUM, openConsole, screenMatching, typeLine, useConsoleServices } from "./console-page.js";

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
