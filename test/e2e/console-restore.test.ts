import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { AhpTestClient, contentText } from "../support/ahp-test-client.js";
import { emulate, screenCells, type Emulator, type EmulatorInput } from "../support/emulated-screen.js";
import { eventually } from "../support/eventually.js";
import { CHROMIUM, connected, openConsole, screenMatching, typeLine, useConsoleServices } from "./console-page.js";

const WIDE = { width: 1100, height: 640 };
const NARROW = { width: 760, height: 420 };
/** How long the terminal must send nothing before its screen counts as settled. */
const QUIET_MS = 1_000;

describe.skipIf(!CHROMIUM)("the browser console's screen after a reload, in Chromium against runner and gateway processes", () => {
  const services = useConsoleServices();

  it("shows top after a resize and a reload exactly as an emulator that followed the terminal all along, scrollback included", async () => {
    const page = await openConsole(services.browser, services.url, WIDE);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    const uri = decodeURIComponent(new URL(page.url()).hash.slice(1));
    // A client that sees everything the terminal does from here on: the reference screen is built from it.
    const watcher = await AhpTestClient.initialized(services.url.replace(/^http/, "ws"));
    const { snapshot } = await watcher.call("subscribe", { channel: uri });
    // A long delay: top redraws on the resize and then stays still.
    await typeLine(page, "top -d 100");
    await screenMatching(page, /load average/);
    await page.setViewportSize(NARROW);
    expect(await eventually(() => actionsOf(watcher, uri).some(({ action }) => action.type === "terminal/resized"))).toBe(true);
    await settled(watcher, uri);
    const reference = bufferCells(await emulate({ cols: snapshot.state.cols, rows: snapshot.state.rows }, inputsAfter(watcher, uri, contentText(snapshot.state), snapshot.fromSeq)));

    await page.reload();
    await connected(page);
    await eventually(async () => JSON.stringify(await consoleCells(page)) === JSON.stringify(reference));
    expect(await consoleCells(page)).toEqual(reference);
    watcher.close();
    await page.close();
  });

  it("goes on from the last byte it showed when the gateway is killed in the middle of a flood: every line once, the scrollback kept", async () => {
    const page = await openConsole(services.browser, services.url, WIDE);
    await page.click("#new-terminal");
    await screenMatching(page, /^\$\s*$/m);
    await typeLine(page, "for b in $(seq 0 29); do seq $((b*1000+1)) $((b*1000+1000)); sleep 0.1; done");
    expect(await eventually(async () => (await lastNumber(page)) >= 25_000, 30_000)).toBe(true);
    await services.gateway.stop("SIGKILL");
    await services.startGateway();
    await connected(page);
    expect(await eventually(async () => (await lastNumber(page)) === 30_000, 20_000)).toBe(true);
    const numbers = (await bufferLines(page)).filter((line) => /^\d+$/.test(line)).map(Number);
    // The whole scrollback (10,000 lines) still holds lines from before the restart: nothing was reset and drawn again.
    expect(numbers.length).toBeGreaterThanOrEqual(10_000);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => 30_000 - numbers.length + 1 + i));
    await page.close();
  }, 90_000);
});

/** Every line of the console's buffer, scrollback and screen, as text. */
function bufferLines(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const buffer = (globalThis as any).consoleTerminal.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < buffer.length; y++) lines.push(buffer.getLine(y)?.translateToString(true) ?? "");
    return lines;
  });
}

/** The highest number the console shows on a line of its own. */
async function lastNumber(page: Page): Promise<number> {
  return Math.max(0, ...(await bufferLines(page)).filter((line) => /^\d+$/.test(line)).map(Number));
}

type Action = { type: string; [key: string]: unknown };

function actionsOf(client: AhpTestClient, channel: string): Array<{ action: Action; serverSeq: number }> {
  return client.frames
    .filter((frame): frame is { method: string; params: { channel: string; action: Action; serverSeq: number } } => (frame as { method?: string }).method === "action")
    .map((frame) => frame.params)
    .filter((envelope) => envelope.channel === channel);
}

/** Waits until the terminal has sent nothing for QUIET_MS. */
async function settled(client: AhpTestClient, channel: string): Promise<void> {
  let count = -1;
  while (count !== actionsOf(client, channel).length) {
    count = actionsOf(client, channel).length;
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  }
}

/** The snapshot's content, then the output and size changes after it, as emulator input. */
function inputsAfter(client: AhpTestClient, channel: string, content: string, fromSeq: number): EmulatorInput[] {
  const inputs: EmulatorInput[] = [{ output: content }];
  for (const { action, serverSeq } of actionsOf(client, channel)) {
    if (serverSeq <= fromSeq) continue;
    if (action.type === "terminal/data") inputs.push({ output: action.data as string });
    else if (action.type === "terminal/resized") inputs.push({ resize: { cols: action.cols as number, rows: action.rows as number } });
  }
  return inputs;
}

/** Every row of a terminal's buffer, scrollback and screen, cell by cell, in the form screenCells gives for the screen. */
function bufferCells(term: Emulator): string[] {
  const buffer = term.buffer.active;
  const whole = { viewportY: 0, cursorX: buffer.cursorX, cursorY: buffer.cursorY, type: buffer.type, getLine: (y: number) => buffer.getLine(y) };
  return screenCells({ cols: term.cols, rows: buffer.length, buffer: { active: whole } } as unknown as Emulator);
}

/** The console's whole buffer, cell by cell, read from its xterm terminal in the page, in the form bufferCells gives. */
async function consoleCells(page: Page): Promise<string[]> {
  const read = await page.evaluate(() => {
    const term = (globalThis as any).consoleTerminal;
    const buffer = term.buffer.active;
    const lines: unknown[][][] = [];
    for (let y = 0; y < buffer.length; y++) {
      const line = buffer.getLine(y);
      const cells: unknown[][] = [];
      for (let x = 0; x < term.cols; x++) {
        const cell = line?.getCell(x);
        if (!cell) continue;
        cells.push([cell.getChars(), cell.getWidth(), cell.isFgDefault(), cell.getFgColorMode(), cell.getFgColor(), cell.isBgDefault(), cell.getBgColorMode(), cell.getBgColor(),
          cell.isBold(), cell.isItalic(), cell.isDim(), cell.isUnderline(), cell.isInverse(), cell.isBlink(), cell.isInvisible(), cell.isStrikethrough()]);
      }
      lines.push(cells);
    }
    return { cols: term.cols, rows: buffer.length, cursorX: buffer.cursorX, cursorY: buffer.cursorY, type: buffer.type, lines };
  });
  return screenCells(emulatorView(read));
}

/** What the page read, in the shape of an emulator, so both screens are put into words by the same code. */
function emulatorView(read: { cols: number; rows: number; cursorX: number; cursorY: number; type: string; lines: unknown[][][] }): Emulator {
  const cellOf = (values: unknown[]) => {
    const [chars, width, fgDefault, fgMode, fg, bgDefault, bgMode, bg, ...flags] = values;
    const flag = (index: number) => () => flags[index] as number;
    return {
      getChars: () => chars, getWidth: () => width,
      isFgDefault: () => fgDefault, getFgColorMode: () => fgMode, getFgColor: () => fg,
      isBgDefault: () => bgDefault, getBgColorMode: () => bgMode, getBgColor: () => bg,
      isBold: flag(0), isItalic: flag(1), isDim: flag(2), isUnderline: flag(3), isInverse: flag(4), isBlink: flag(5), isInvisible: flag(6), isStrikethrough: flag(7),
    };
  };
  const buffer = {
    viewportY: 0,
    cursorX: read.cursorX,
    cursorY: read.cursorY,
    type: read.type,
    getLine: (y: number) => ({ getCell: (x: number) => (read.lines[y]?.[x] ? cellOf(read.lines[y]![x]!) : undefined) }),
  };
  return { cols: read.cols, rows: read.rows, buffer: { active: buffer } } as unknown as Emulator;
}
