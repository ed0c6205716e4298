import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { TerminalMode, type AttachResponse, type TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";
import { startTestRunner, type TestRunner } from "./harness.js";

const shells = ["/bin/bash", "/usr/bin/zsh"].filter((shell) => existsSync(shell));
if (!shells.includes("/usr/bin/zsh")) process.stdout.write("zsh is not installed: its command detection test is skipped (.ci/run installs it)\n");

const runners: TestRunner[] = [];
afterAll(() => Promise.all(runners.map((runner) => runner.close())));

/** A home whose rc files set a prompt and an alias, as a user's would. */
function userHome(): string {
  const home = mkdtempSync(join(tmpdir(), "rc-home-"));
  const rc = "PS1='custom> '\nalias ll='echo aliased-ll'\n";
  writeFileSync(join(home, ".bashrc"), rc);
  writeFileSync(join(home, ".zshrc"), rc.replace("custom> ", "zcustom> "));
  return home;
}

/** Re-reads the terminal's retained events until `done` holds for them. */
async function eventsWhen(client: Client<typeof TerminalService>, id: string, done: (events: AttachResponse[]) => boolean): Promise<AttachResponse[]> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const events: AttachResponse[] = [];
    for await (const event of client.attach({ id, follow: false })) events.push(event);
    if (done(events)) return events;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("timed out waiting for terminal events");
}

const finishedCount = (events: AttachResponse[]): number => events.filter((event) => event.event.case === "commandFinished").length;
const outputText = (events: AttachResponse[]): string =>
  events.map((event) => (event.event.case === "output" ? Buffer.from(event.event.value.data).toString() : "")).join("");

describe.each(shells)("command detection in %s under a pty", (shell) => {
  it("reports each command with its line, output, exit code and duration, and follows cd", async () => {
    const home = userHome();
    const runner = await startTestRunner({ env: { PATH: process.env.PATH, HOME: home, SHELL: shell, TERM: "xterm-256color" } });
    runners.push(runner);
    const client = runner.grpc;
    const { terminal } = await client.spawn({});
    const id = terminal!.id;
    expect(terminal!.commandDetection).toBe(true);
    const prompt = shell.endsWith("zsh") ? "zcustom> " : "custom> ";
    await eventsWhen(client, id, (events) => outputText(events).includes(prompt));

    const typed = ["cd /tmp", "false", "echo hi", "seq 1 5000", "echo hx\x7fi there", "ll"];
    for (const [index, line] of typed.entries()) {
      await client.write({ id, data: Buffer.from(`${line}\r`) });
      await eventsWhen(client, id, (events) => finishedCount(events) === index + 1);
    }
    const events = await eventsWhen(client, id, (all) => finishedCount(all) === typed.length);
    const commands: Array<{ line: string; output: string; exitCode?: number; durationMs: number }> = [];
    let current: { line: string; output: string } | undefined;
    for (const event of events) {
      if (event.event.case === "commandExecuted") current = { line: event.event.value.commandLine, output: "" };
      else if (event.event.case === "output" && current) current.output += Buffer.from(event.event.value.data).toString();
      else if (event.event.case === "commandFinished" && current) {
        commands.push({ ...current, exitCode: event.event.value.exitCode, durationMs: Number(event.event.value.durationMs) });
        current = undefined;
      }
    }
    expect(commands.map((command) => command.line)).toEqual(["cd /tmp", "false", "echo hi", "seq 1 5000", "echo hi there", "ll"]);
    expect(commands.map((command) => command.exitCode)).toEqual([0, 1, 0, 0, 0, 0]);
    for (const command of commands) expect(command.durationMs).toBeGreaterThanOrEqual(0);
    expect(commands[2]!.output).toMatch(/^hi\r\n/);
    const seqLines = commands[3]!.output.split("\r\n").filter((line) => /^\d+$/.test(line));
    expect(seqLines).toHaveLength(5000);
    expect(seqLines.at(-1)).toBe("5000");
    expect(commands[4]!.output).toMatch(/^hi there\r\n/);
    expect(commands[5]!.output).toMatch(/^aliased-ll\r\n/);
    const cwds = events.filter((event) => event.event.case === "cwdChanged").map((event) => (event.event.value as { cwd: string }).cwd);
    expect(cwds.at(-1)).toBe("/tmp");
    expect((await client.get({ id })).terminal?.cwd).toBe("/tmp");
    expect(events[0]!.event.case).toBe("commandDetectionAvailable");
    expect(events.filter((event) => event.event.case === "commandDetectionAvailable")).toHaveLength(1);

    // A replay reproduces the same events at the same offsets.
    const marks = (all: AttachResponse[]) => all.filter((event) => event.event.case !== "output").map((event) => [event.offset, event.event.case, JSON.stringify(event.event.value, (_, v) => (typeof v === "bigint" ? Number(v) : v))]);
    const replay = await eventsWhen(client, id, () => true);
    expect(marks(replay).slice(0, marks(events).length)).toEqual(marks(events));
  }, 60_000);

  it("keeps $? for the user's own prompt and commands", async () => {
    const runner = await startTestRunner({ env: { PATH: process.env.PATH, HOME: userHome(), SHELL: shell, TERM: "xterm-256color" } });
    runners.push(runner);
    const { terminal } = await runner.grpc.spawn({});
    await runner.grpc.write({ id: terminal!.id, data: Buffer.from("false\recho status=$?\r") });
    await eventsWhen(runner.grpc, terminal!.id, (events) => /status=1\r\n/.test(outputText(events)));
  });
});

describe.skipIf(!shells.includes("/bin/bash"))("bash command detection beside the user's PROMPT_COMMAND", () => {
  it.each([
    ["a string ending in a semicolon (as version-manager hooks leave it)", "PROMPT_COMMAND='user_hook;'"],
    ["a string with blanks and semicolons at both ends", "PROMPT_COMMAND=' ; user_hook ; '"],
    ["an array", "PROMPT_COMMAND=(user_hook user_hook)"],
  ])("keeps working with %s", async (_, assignment) => {
    const home = mkdtempSync(join(tmpdir(), "rc-home-"));
    writeFileSync(join(home, ".bashrc"), `PS1='custom> '\nuser_hook() { printf 'hook-ran\\n'; }\n${assignment}\n`);
    const runner = await startTestRunner({ env: { PATH: process.env.PATH, HOME: home, SHELL: "/bin/bash", TERM: "xterm-256color" } });
    runners.push(runner);
    const { terminal } = await runner.grpc.spawn({});
    await runner.grpc.write({ id: terminal!.id, data: Buffer.from("false\r") });
    const events = await eventsWhen(runner.grpc, terminal!.id, (all) => finishedCount(all) === 1 && outputText(all).split("hook-ran").length > 2);
    expect(outputText(events)).not.toContain("syntax error");
    const finished = events.find((event) => event.event.case === "commandFinished")!.event.value as { exitCode?: number };
    expect(finished.exitCode).toBe(1);
  });
});

describe.skipIf(!shells.includes("/bin/bash"))("an Attach that strips shell marks, on bash under a pty", () => {
  it("gets the output without OSC 133, 633 and 7, the same command events at the same offsets, and end offsets to come back from", async () => {
    const runner = await startTestRunner({ env: { PATH: process.env.PATH, HOME: userHome(), SHELL: "/bin/bash", TERM: "xterm-256color" } });
    runners.push(runner);
    const client = runner.grpc;
    const id = (await client.spawn({})).terminal!.id;
    await eventsWhen(client, id, (events) => outputText(events).includes("custom> "));
    // The last line prints a 633 mark, then a 133 mark in two writes 300 ms apart: two reads of the pty.
    const typed = ["cd /tmp", "echo hi", "printf '\\e]633;E;x\\a\\e]13'; sleep 0.3; printf '3;B\\asplit-%s\\n' done"];
    for (const [index, line] of typed.entries()) {
      await client.write({ id, data: Buffer.from(`${line}\r`) });
      await eventsWhen(client, id, (events) => finishedCount(events) === index + 1 && outputText(events).split("custom> ").length === index + 3);
    }
    // The prompt is drawn: the output stops growing.
    let length = -1;
    await eventsWhen(client, id, (events) => length === (length = outputText(events).length));
    const read = async (options: { stripShellMarks: boolean; fromOffset?: bigint }): Promise<AttachResponse[]> => {
      const events: AttachResponse[] = [];
      for await (const event of client.attach({ id, follow: false, ...options })) events.push(event);
      return events;
    };
    const raw = await read({ stripShellMarks: false });
    const stripped = await read({ stripShellMarks: true });
    const rawText = outputText(raw);
    const withoutMarks = (text: string): string => text.replace(/\x1b\](?:133|633|7);[^\x07\x1b]*(?:\x07|\x1b\\)/g, "");
    for (const mark of ["\x1b]133;", "\x1b]633;", "\x1b]7;"]) {
      expect(rawText).toContain(mark);
      expect(outputText(stripped)).not.toContain(mark);
    }
    expect(outputText(stripped)).toBe(withoutMarks(rawText));
    expect(outputText(stripped)).toContain("split-done\r\n");
    const others = (events: AttachResponse[]) => events.filter((event) => event.event.case !== "output").map((event) => `${event.offset} ${event.event.case}`);
    expect(others(stripped)).toEqual(others(raw));
    expect(others(stripped).filter((event) => event.endsWith("commandFinished"))).toHaveLength(typed.length);

    // The output events cover the log end to end, marks included.
    const ranges = stripped.flatMap((event) => (event.event.case === "output" ? [[Number(event.offset), Number(event.event.value.endOffset)]] : []));
    let at = 0;
    for (const [start, end] of ranges) {
      expect(start).toBe(at);
      at = end!;
    }
    expect(at).toBe(Buffer.byteLength(rawText));

    // Coming back from the end of any output event gives exactly the rest.
    for (const [, end] of ranges.filter((_, index) => index % 3 === 1)) {
      const rest = await read({ stripShellMarks: true, fromOffset: BigInt(end!) });
      expect(outputText(rest)).toBe(withoutMarks(Buffer.from(rawText).subarray(end).toString()));
    }
  }, 60_000);
});

describe("terminals without command detection", () => {
  it("never claim it on pipes, for a shell line, or for a shell without integration, and still work", async () => {
    const runner = await startTestRunner({ env: { PATH: process.env.PATH, HOME: userHome(), SHELL: "/bin/bash" } });
    runners.push(runner);
    const pipes = (await runner.grpc.spawn({ mode: TerminalMode.PIPES })).terminal!;
    const line = (await runner.grpc.spawn({ command: "echo $((1+1))" })).terminal!;
    const dash = (await runner.grpc.spawn({ shell: "/bin/sh" })).terminal!;
    for (const terminal of [pipes, line, dash]) expect(terminal.commandDetection).toBe(false);
    await runner.grpc.write({ id: dash.id, data: Buffer.from("echo plain-$((2+3))\r") });
    const events = await eventsWhen(runner.grpc, dash.id, (all) => /plain-5\r\n/.test(outputText(all)));
    expect(events.some((event) => event.event.case?.startsWith("command"))).toBe(false);
  });
});
