import xterm from "@xterm/headless";
import type { Client } from "@connectrpc/connect";
import type { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";

const { Terminal } = xterm;
/** A headless xterm, the emulator the console and the runner's screens use. */
export type Emulator = InstanceType<typeof Terminal>;

/** What an emulator is fed: output bytes or text, and size changes where they happened. */
export type EmulatorInput = { output: Uint8Array | string } | { resize: { cols: number; rows: number } } | { clear: true };

/** A fresh emulator of `size` fed `inputs` in order (each write finished before a size change), with `scrollback` lines kept. */
export async function emulate(size: { cols: number; rows: number }, inputs: readonly EmulatorInput[], scrollback = 1000): Promise<Emulator> {
  const term = new Terminal({ ...size, scrollback, allowProposedApi: true });
  for (const input of inputs) {
    if ("output" in input) await new Promise<void>((resolve) => term.write(input.output, resolve));
    else if ("resize" in input) term.resize(input.resize.cols, input.resize.rows);
    else term.clear();
  }
  return term;
}

/** Everything a runner retains of a terminal, as emulator input: its output and size changes in order, and its end offset. */
export async function retainedInputs(client: Client<typeof TerminalService>, id: string): Promise<{ inputs: EmulatorInput[]; end: number }> {
  const inputs: EmulatorInput[] = [];
  let end = 0;
  for await (const { event } of client.attach({ id, follow: false })) {
    if (event.case === "output") {
      inputs.push({ output: event.value.data });
      end = Number(event.value.endOffset);
    } else if (event.case === "resized") inputs.push({ resize: { cols: event.value.cols, rows: event.value.rows } });
    else if (event.case === "cleared") inputs.push({ clear: true });
  }
  return { inputs, end };
}

/**
 * The visible screen, cell by cell: each row as its characters, then each cell's attributes that
 * differ from the default (colour modes and values, bold, inverse, underline, …), then the cursor and
 * which buffer is active. Two screens are the same when these are equal.
 */
export function screenCells(term: Emulator): string[] {
  const buffer = term.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    let chars = "";
    const styles: string[] = [];
    for (let x = 0; x < term.cols; x++) {
      const cell = line?.getCell(x);
      if (!cell) continue;
      chars += cell.getWidth() === 0 ? "" : cell.getChars() || " ";
      const style = cellStyle(cell);
      if (style) styles.push(`${x}:${style}`);
    }
    rows.push(`${chars}|${styles.join(",")}`);
  }
  rows.push(`cursor ${buffer.cursorX},${buffer.cursorY} in the ${buffer.type} buffer`);
  return rows;
}

/** The text of the visible screen, one line per row without trailing blanks. */
export function screenText(term: Emulator): string {
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let y = 0; y < term.rows; y++) lines.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? "");
  return lines.join("\n");
}

type Cell = NonNullable<ReturnType<NonNullable<ReturnType<Emulator["buffer"]["active"]["getLine"]>>["getCell"]>>;

function cellStyle(cell: Cell): string {
  const parts: string[] = [];
  if (!cell.isFgDefault()) parts.push(`fg${cell.getFgColorMode()}=${cell.getFgColor()}`);
  if (!cell.isBgDefault()) parts.push(`bg${cell.getBgColorMode()}=${cell.getBgColor()}`);
  const flags: Array<[string, number]> = [
    ["b", cell.isBold()],
    ["i", cell.isItalic()],
    ["d", cell.isDim()],
    ["u", cell.isUnderline()],
    ["v", cell.isInverse()],
    ["k", cell.isBlink()],
    ["h", cell.isInvisible()],
    ["s", cell.isStrikethrough()],
  ];
  for (const [name, set] of flags) if (set) parts.push(name);
  return parts.join("");
}

/**
 * A bash script drawing on the alternate screen at addresses a smaller size cuts off (row 1 column
 * 80, row 30), that redraws one line only when resized ("resized to ROWS COLS"): its transcript,
 * replayed at the new size, puts things elsewhere than the live screen shows them.
 */
export const PARTIAL_REDRAW = [
  "trap 'printf \"\\033[2;1H\\033[32mresized to %s\\033[0m\" \"$(stty size)\"' WINCH",
  "printf '\\033[?1049h\\033[2J\\033[1;80H\\033[1mfar-right\\033[0m\\033[30;1Hlow-row\\033[5;5H'",
  "while :; do sleep 0.1; done",
].join("; ");
