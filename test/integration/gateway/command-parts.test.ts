import { describe, expect, it } from "vitest";
import { terminalReducer } from "../../../ahp/terminal-reducer.js";
import type { TerminalState } from "../../../ahp/types.js";
import { AhpTestClient, contentText } from "../../support/ahp-test-client.js";
import { useTestGateway } from "./harness.js";

const gateway = useTestGateway({ shell: "/bin/bash" });

describe("command detection through the gateway (real bash in a real pty)", () => {
  it("builds command parts with their output, exit code and duration, follows cd, and strips the marks", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { versions: ["0.9.0"] });
    const uri = "ahp-terminal:/commands";
    await client.call("createTerminal", { channel: uri });
    const first = (await client.call("subscribe", { channel: uri })).snapshot;
    expect(first.state.supportsCommandDetection).toBe(true);
    await client.waitForEnvelope((e) => e.channel === uri && e.action.type === "terminal/commandDetectionAvailable");

    // The last line prints a 633 mark, then a 133 mark in two writes 300 ms apart: two reads of the pty.
    const split = "printf '\\e]633;E;x\\a\\e]13'; sleep 0.3; printf '3;B\\asplit-%s\\n' done";
    const typed = ["cd /tmp", "false", "echo hi", "echo hx\x7fi", "seq 1 5000", split];
    for (const [index, line] of typed.entries()) {
      client.dispatch(uri, { type: "terminal/input", data: `${line}\r` });
      await client.waitForEnvelope(() => client.envelopes().filter((e) => e.action.type === "terminal/commandFinished").length === index + 1);
    }
    const { state } = (await client.call("subscribe", { channel: uri })).snapshot as { state: TerminalState };
    const commands = state.content.filter((part) => part.type === "command");
    expect(commands.map((part) => part.type === "command" && [part.commandLine, part.exitCode, part.isComplete])).toEqual([
      ["cd /tmp", 0, true],
      ["false", 1, true],
      ["echo hi", 0, true],
      ["echo hi", 0, true],
      ["seq 1 5000", 0, true],
      [split, 0, true],
    ]);
    const seq = commands[4]!;
    const seqLines = (seq.type === "command" ? seq.output : "").split("\r\n").filter((line) => /^\d+$/.test(line));
    expect(seqLines.length).toBe(5000);
    expect(seqLines.at(-1)).toBe("5000");
    for (const part of commands) if (part.type === "command") expect(part.durationMs).toBeGreaterThanOrEqual(0);
    const printed = commands[5]!;
    expect(printed.type === "command" && printed.output).toBe("split-done\r\n");
    const echo = commands[2]!;
    expect(echo.type === "command" && echo.output).toMatch(/^hi\r\n/);
    expect(state.content[0]!.type).toBe("unclassified");
    // Between commands (the prompts) the output stays unclassified.
    const kinds = state.content.map((part) => part.type);
    for (let i = 1; i < kinds.length; i++) expect(kinds[i] === "command" && kinds[i - 1] === "command").toBe(false);
    expect(state.cwd).toBe("file:///tmp");

    const everything = contentText(state) + client.outputOf(uri);
    for (const mark of ["\x1b]133;", "\x1b]633;", "\x1b]7;"]) expect(everything).not.toContain(mark);

    // A client's mirror, the snapshot it got plus every envelope after it, equals the host's state.
    let mirror = first.state as TerminalState;
    for (const envelope of client.envelopes()) {
      if (envelope.channel === uri && envelope.serverSeq > first.fromSeq && !envelope.rejectionReason) mirror = terminalReducer(mirror, envelope.action);
    }
    expect(mirror.content).toEqual(state.content);
    expect(mirror.cwd).toBe(state.cwd);

    // Subscribing again shows the same parts.
    expect((await client.call("subscribe", { channel: uri })).snapshot.state.content).toEqual(state.content);
    client.close();
  });
});
