import { describe, expect, it } from "vitest";
import type { ReadEvent } from "../../../services/runner/log/output-log.js";
import { renderScreen } from "../../../services/runner/terminal/screen-render.js";
import { emulate, screenCells, type EmulatorInput } from "../../support/emulated-screen.js";

const SIZE = { cols: 72, rows: 20 };

/** The rendering of `output`, written into a fresh emulator, then `later`: cell by cell. */
async function restoredThen(output: string, later: string): Promise<string[]> {
  const data = Buffer.from(output);
  const events: ReadEvent[] = [{ offset: 0, event: { kind: "output", parts: [data], end: data.length } }];
  const screen = await renderScreen({ offset: 0, ...SIZE, data: "" }, events, data.length, 0);
  return screenCells(await emulate({ cols: screen.cols, rows: screen.rows }, [{ output: screen.data }, { output: later }]));
}

const live = (inputs: EmulatorInput[]): Promise<string[]> => emulate(SIZE, inputs).then(screenCells);

describe("a rendered screen, cut anywhere in a program's drawing, then the program's next output", () => {
  it.each([
    ["the pen (attributes set and not yet reset)", "\x1b[?1049h\x1b[1;7;31mhead", "er\x1b[0m plain"],
    ["the cursor waiting to wrap after the last column", `\x1b[?1049h${"a".repeat(72)}`, "b"],
    ["the saved cursor", "\x1b[?1049h\x1b[5;10H\x1b7\x1b[1;1Hstatus", "\x1b8back"],
    ["the line-drawing set in G0", "\x1b[?1049h\x1b(0lqq", "qk\x1b(B text"],
    ["the line-drawing set in G1, shifted in", "\x1b[?1049h\x1b)0\x0elq", "qk\x0f text"],
    ["the scroll region", "\x1b[3;10r\x1b[10;1H", "a\nb\nc"],
  ])("carries on as the live screen does: %s", async (_, output, later) => {
    expect(await restoredThen(output, later)).toEqual(await live([{ output }, { output: later }]));
  });
});

describe("a rendered screen after a narrowing resize", () => {
  it("keeps each row to the new width, though the emulator keeps the alternate screen's longer lines", async () => {
    const before = Buffer.from(`\x1b[?1049h\x1b[2J\x1b[H${"w".repeat(100 * 3)}`);
    const after = Buffer.from(`\x1b[2J\x1b[H${"n".repeat(72)}wrapped\r\nnext`);
    const events = [
      { offset: 0, event: { kind: "output", parts: [before], end: before.length } },
      { offset: before.length, event: { kind: "resized", cols: 72, rows: 20 } },
      { offset: before.length, event: { kind: "output", parts: [after], end: before.length + after.length } },
    ] as ReadEvent[];
    const screen = await renderScreen({ offset: 0, cols: 100, rows: 30, data: "" }, events, before.length + after.length, 0);
    const restored = screenCells(await emulate({ cols: screen.cols, rows: screen.rows }, [{ output: screen.data }]));
    expect(restored).toEqual(await emulate({ cols: 100, rows: 30 }, [{ output: before }, { resize: SIZE }, { output: after }]).then(screenCells));
  });

  it.each([
    ["a partial redraw", 20, "\x1b[HX"],
    ["no output after it", 40, ""],
  ])("reflows the normal screen into the scrollback as a client does, with %s, though no scrollback is asked for", async (_, count, after) => {
    const lines = Array.from({ length: count }, (_, i) => String(i).padEnd(80, "r")).join("\r\n");
    const before = Buffer.from(`\x1b[H\x1b[2J${lines}\x1b[5;1H`);
    const later = Buffer.from(after);
    const events = [
      { offset: 0, event: { kind: "output", parts: [before], end: before.length } },
      { offset: before.length, event: { kind: "resized", cols: 72, rows: 20 } },
      { offset: before.length, event: { kind: "output", parts: [later], end: before.length + later.length } },
    ] as ReadEvent[];
    const screen = await renderScreen({ offset: 0, cols: 100, rows: 32, data: "" }, events, before.length + later.length, 0);
    const restored = screenCells(await emulate({ cols: screen.cols, rows: screen.rows }, [{ output: screen.data }]));
    expect(restored).toEqual(await emulate({ cols: 100, rows: 32 }, [{ output: before }, { resize: SIZE }, { output: later }]).then(screenCells));
  });
});
