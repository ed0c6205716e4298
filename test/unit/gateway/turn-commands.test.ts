import { describe, expect, it } from "vitest";
import { TextStream } from "../../../gateway/backend/text-stream.js";
import { runTurnCommand } from "../../../gateway/backend/turn-commands.js";
import { parseTerminalCommand } from "../../../gateway/terminals/terminal-command.js";

describe("parseTerminalCommand", () => {
  it("reads !command lines and leaves a lone ! (or ! and spaces) to the agent", () => {
    expect(parseTerminalCommand("!ls -la")).toBe("ls -la");
    expect(parseTerminalCommand("!echo hi && exit 3")).toBe("echo hi && exit 3");
    expect(parseTerminalCommand("! git status")).toBe(" git status");
    expect(parseTerminalCommand("!")).toBeUndefined();
    expect(parseTerminalCommand("!   ")).toBeUndefined();
    expect(parseTerminalCommand("ls")).toBeUndefined();
    expect(parseTerminalCommand(" !ls")).toBeUndefined();
  });
});

describe("runTurnCommand without terminals", () => {
  it("names the provider that cannot run it", async () => {
    const command = { session: "s", chat: "c", turnId: "t", toolCallId: "tc", workingDirectories: [], line: "ls", provider: "copilot" };
    await expect(runTurnCommand(undefined, command, "/")).rejects.toThrow("copilot cannot run a command in a turn; use a terminal instead");
  });
});

describe("TextStream", () => {
  it("gives every reader everything from the start, then what comes later, until the end", async () => {
    const stream = new TextStream();
    stream.push("a");
    const early: string[] = [];
    const reading = (async () => {
      for await (const text of stream) early.push(text);
    })();
    stream.push("b");
    stream.end();
    await reading;
    const late: string[] = [];
    for await (const text of stream) late.push(text);
    expect(early).toEqual(["a", "b"]);
    expect(late).toEqual(["a", "b"]);
  });

  it("tells a reader that fell too far behind how much it missed", async () => {
    const stream = new TextStream();
    for (let i = 0; i < 10; i++) stream.push("x".repeat(1024 * 1024));
    stream.end();
    const read: string[] = [];
    for await (const text of stream) read.push(text);
    expect(read[0]).toMatch(/^\[\d+ characters of output were dropped before they were read\]$/);
    expect(read.slice(1).join("").length).toBeLessThanOrEqual(8 * 1024 * 1024);
  });
});
