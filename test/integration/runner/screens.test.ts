import { Code, type Client } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";
import { failureOf } from "../../support/connect-code.js";
import { scratchHome } from "../../support/scratch-home.js";
import { emulate, retainedInputs, screenCells, screenText, type Emulator } from "../../support/emulated-screen.js";
import { eventually, runToExit, useTestRunner, waitForOutput } from "./harness.js";

const home = scratchHome("screens-home-");
const env = { PATH: process.env.PATH, HOME: home, SHELL: "/bin/bash", TERM: "xterm-256color", LANG: "C.UTF-8" };
const runner = useTestRunner({ env, retainBytes: 1 << 20 });
const small = useTestRunner({ env, retainBytes: 4096 });

/** The runner's screen of a terminal at `end`, written into a fresh emulator of its size. */
async function restored(client: Client<typeof TerminalService>, id: string, end: number, scrollbackLines = 0): Promise<Emulator> {
  // Retained output read to its end comes with the events stamped there (a size change after the last output): the screen too.
  const screen = await client.getScreen({ id, endOffset: BigInt(end), scrollbackLines, eventsAtEnd: true });
  expect(Number(screen.endOffset)).toBe(end);
  return emulate({ cols: screen.cols, rows: screen.rows }, [{ output: screen.data }]);
}

const hidden = (term: Emulator): boolean => (term as unknown as { _core: { coreService: { isCursorHidden: boolean } } })._core.coreService.isCursorHidden;

describe("GetScreen: the screen as an emulator shows it, rendered from the retained output", () => {
  it("matches an emulator fed the same output, alternate screen, colours, scroll region and hidden cursor included, across a resize", async () => {
    const script = [
      "printf '\\033[1;31mred bold\\033[0m on the normal screen\\r\\n'",
      "printf '\\033[?1049h\\033[2J\\033[H\\033[44mblue top\\033[0m\\033[3;20r\\033[?25l'",
      "printf '\\033[10;5H\\033[7minverse\\033[0m'",
      "read go",
      "printf '\\033[2J\\033[1;1Hafter resize: %s\\033[5;3H\\033[4munder\\033[0m' \"$(stty size)\"",
      "sleep 30",
    ].join("; ");
    const { terminal } = await runner.grpc.spawn({ argv: ["bash", "-c", script], cols: 90, rows: 30 });
    const id = terminal!.id;
    await waitForOutput(runner.grpc, id, /inverse/);
    await runner.grpc.resize({ id, cols: 70, rows: 22 });
    await runner.grpc.write({ id, data: Buffer.from("go\r") });
    await waitForOutput(runner.grpc, id, /under/);
    const { inputs, end } = await retainedInputs(runner.grpc, id);
    const expected = await emulate({ cols: 90, rows: 30 }, inputs);
    const screen = await restored(runner.grpc, id, end);
    expect(expected.buffer.active.type).toBe("alternate");
    expect(screenText(expected)).toContain("after resize: 22 70");
    expect(screenCells(screen)).toEqual(screenCells(expected));
    expect(hidden(screen)).toBe(true);
    // The scroll region came back too: a line feed at its bottom scrolls only the region.
    const feed = "\x1b[20;1Hbottom\n";
    await new Promise<void>((resolve) => expected.write(feed, resolve));
    await new Promise<void>((resolve) => screen.write(feed, resolve));
    expect(screenCells(screen)).toEqual(screenCells(expected));
    await runner.grpc.close({ id });
  });

  it.each([
    ["vim", ["vim", "-u", "NONE", "-N", "+set number", "+syntax on", "/etc/services"]],
    ["less", ["less", "/etc/services"]],
    ["top", ["top", "-d", "1"]],
  ])("restores %s exactly after the terminal was resized", async (name, argv) => {
    const { terminal } = await runner.grpc.spawn({ argv, cols: 100, rows: 32 });
    const id = terminal!.id;
    await eventually(async () => (await runner.grpc.get({ id })).terminal!.endOffset > 500n);
    await runner.grpc.resize({ id, cols: 72, rows: 20 });
    // The program drew again after the size change.
    const redrawn = async (): Promise<boolean> => {
      const { inputs } = await retainedInputs(runner.grpc, id);
      const resizedAt = inputs.findLastIndex((input) => "resize" in input);
      return resizedAt >= 0 && inputs.slice(resizedAt + 1).some((input) => "output" in input);
    };
    expect(await eventually(redrawn)).toBe(true);
    const { inputs, end } = await retainedInputs(runner.grpc, id);
    const expected = await emulate({ cols: 100, rows: 32 }, inputs);
    expect(expected.cols, name).toBe(72);
    expect(screenCells(await restored(runner.grpc, id, end))).toEqual(screenCells(expected));
    await runner.grpc.close({ id });
  });

  it("carries scrollback, and the screen at an earlier offset", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "seq 1 300; echo marker-1; read x; seq 301 320; sleep 30", cols: 40, rows: 10 });
    const id = terminal!.id;
    await waitForOutput(runner.grpc, id, /marker-1/);
    const early = await retainedInputs(runner.grpc, id);
    await runner.grpc.write({ id, data: Buffer.from("\r") });
    await waitForOutput(runner.grpc, id, /320/);
    const then = await restored(runner.grpc, id, early.end, 100);
    expect(screenCells(then)).toEqual(screenCells(await emulate({ cols: 40, rows: 10 }, early.inputs)));
    // The screen holds 293 to 300, marker-1 and the cursor's empty line; the 100 lines above it start at 193.
    expect(then.buffer.active.getLine(0)?.translateToString(true)).toBe("193");
    await runner.grpc.close({ id });
  });

  it("applies a size change that came after the last output only when asked to", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "printf 'sized'; sleep 30", cols: 60, rows: 20 });
    const id = terminal!.id;
    await waitForOutput(runner.grpc, id, /sized/);
    await runner.grpc.resize({ id, cols: 40, rows: 10 });
    const end = (await runner.grpc.get({ id })).terminal!.endOffset;
    expect(await runner.grpc.getScreen({ id, endOffset: end })).toMatchObject({ cols: 60, rows: 20 });
    expect(await runner.grpc.getScreen({ id, endOffset: end, eventsAtEnd: true })).toMatchObject({ cols: 40, rows: 10 });
    await runner.grpc.close({ id });
  });

  it("starts from what a clear left, as a client's screen does", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "printf 'before clear\\r\\nprompt$ '; read x; printf 'after clear\\r\\n\\033[32mgreen\\033[0m'; sleep 30", cols: 50, rows: 12 });
    const id = terminal!.id;
    await waitForOutput(runner.grpc, id, /prompt\$ /);
    const before = await retainedInputs(runner.grpc, id);
    await runner.grpc.clear({ id });
    await runner.grpc.write({ id, data: Buffer.from("\r") });
    await waitForOutput(runner.grpc, id, /green/);
    const after = await retainedInputs(runner.grpc, id);
    const expected = await emulate({ cols: 50, rows: 12 }, [...before.inputs, { clear: true }, ...after.inputs.filter((input) => !("clear" in input))]);
    expect(screenText(expected)).not.toContain("before clear");
    expect(screenCells(await restored(runner.grpc, id, after.end))).toEqual(screenCells(expected));
    await runner.grpc.close({ id });
  });

  it("keeps a size change made just before a clear, with no output between", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "printf 'sized'; sleep 30", cols: 60, rows: 20 });
    const id = terminal!.id;
    await waitForOutput(runner.grpc, id, /sized/);
    await runner.grpc.resize({ id, cols: 40, rows: 10 });
    await runner.grpc.clear({ id });
    expect(await runner.grpc.getScreen({ id })).toMatchObject({ cols: 40, rows: 10 });
    await runner.grpc.close({ id });
  });

  it("places the commands the shell reported, with their exit codes", async () => {
    const { terminal } = await runner.grpc.spawn({ cols: 80, rows: 24 });
    const id = terminal!.id;
    expect(terminal!.commandDetection).toBe(true);
    await waitForOutput(runner.grpc, id, /[$#] /);
    await runner.grpc.write({ id, data: Buffer.from("false\rtrue\recho done-$((40+2))\r") });
    await waitForOutput(runner.grpc, id, /done-42\r\n.*[$#] /s);
    expect(await eventually(async () => (await runner.grpc.getScreen({ id })).commands.length === 3)).toBe(true);
    const screen = await runner.grpc.getScreen({ id });
    const rows = screenText(await emulate({ cols: screen.cols, rows: screen.rows }, [{ output: screen.data }])).split("\n");
    expect(screen.commands.map(({ exitCode, line }) => [exitCode, rows[line]?.replace(/^.*[$#] /, "")])).toEqual([
      [1, "false"],
      [0, "true"],
      [0, "echo done-$((40+2))"],
    ]);
    await runner.grpc.close({ id });
  });

  it("says so when retention no longer holds the output it needs, and refuses offsets past the end", async () => {
    const { terminal } = await small.grpc.spawn({ command: "seq 1 5000; echo all-out; sleep 30" });
    const id = terminal!.id;
    await waitForOutput(small.grpc, id, /all-out/);
    expect(await failureOf(small.grpc.getScreen({ id }))).toEqual({ code: Code.FailedPrecondition, message: expect.stringMatching(/no longer retained/) });
    const end = (await small.grpc.get({ id })).terminal!.endOffset;
    expect((await failureOf(small.grpc.getScreen({ id, endOffset: end + 1n })))?.code).toBe(Code.OutOfRange);
    expect((await failureOf(small.grpc.getScreen({ id, scrollbackLines: 10_001 })))?.code).toBe(Code.InvalidArgument);
    await small.grpc.close({ id });
  });
});

describe("Spawn's term: the caller's terminal type", () => {
  it("is used when this host describes it, and the runner's own otherwise", async () => {
    const termOf = async (term: string): Promise<string> => {
      const { terminal } = await runner.grpc.spawn({ command: 'echo "TERM=$TERM"', term });
      return (await runToExit(runner.grpc, terminal!.id)).output.toString().trim();
    };
    expect(await termOf("screen-256color")).toBe("TERM=screen-256color");
    expect(await termOf("no-such-terminal")).toBe("TERM=xterm-256color");
    expect(await termOf("")).toBe("TERM=xterm-256color");
    expect((await failureOf(runner.grpc.spawn({ command: "true", term: "../../etc/passwd" })))?.code).toBe(Code.InvalidArgument);
  });
});
