import { describe, expect, it } from "vitest";
import { OutputLog, outputBytes } from "../../../services/runner/log/output-log.js";
import { cwdFromOsc, ShellIntegration } from "../../../services/runner/shell/shell-integration.js";
import { planSpawn } from "../../../services/runner/spawn/spawn-plan.js";
import { Terminal } from "../../../services/runner/terminal/terminal.js";
import { FakeLauncher } from "./fake-launcher.js";

const osc = (payload: string): string => `\x1b]${payload}\x07`;

function clock(start = 1_000): { now: () => number; advance(ms: number): void } {
  let time = start;
  return { now: () => time, advance: (ms) => (time += ms) };
}

describe("ShellIntegration", () => {
  it("reports a command from C to D with the line typed since the last command, its exit code and duration", () => {
    const time = clock();
    const shell = new ShellIntegration(time.now);
    expect(shell.onOsc("133;A")).toEqual([]);
    expect(shell.onOsc("133;B")).toEqual([]);
    shell.onInput(Buffer.from("falx\x7fse\r"));
    expect(shell.onOsc("133;C")).toEqual([{ kind: "command_executed", commandId: "cmd-1", commandLine: "false", timestampMs: 1_000 }]);
    time.advance(250);
    expect(shell.onOsc("133;D;1")).toEqual([{ kind: "command_finished", commandId: "cmd-1", exitCode: 1, durationMs: 250 }]);
  });

  it("reads VS Code's 633 marks the same way, and leaves the exit code out when none is given", () => {
    const shell = new ShellIntegration(clock().now);
    shell.onInput(Buffer.from("ls\r"));
    expect(shell.onOsc("633;C")[0]).toMatchObject({ commandLine: "ls" });
    expect(shell.onOsc("633;D")).toEqual([{ kind: "command_finished", commandId: "cmd-1", durationMs: 0 }]);
  });

  it("does not give an empty line or a comment to the next command", () => {
    const shell = new ShellIntegration(clock().now);
    shell.onOsc("133;A");
    shell.onInput(Buffer.from("\r"));
    shell.onOsc("133;A");
    shell.onInput(Buffer.from("# just a note\r"));
    shell.onOsc("133;A");
    shell.onInput(Buffer.from("pwd\r"));
    expect(shell.onOsc("133;C")[0]).toMatchObject({ commandLine: "pwd" });
  });

  it("gives input typed while a command runs to that command, and keeps lines typed before it started", () => {
    const shell = new ShellIntegration(clock().now);
    shell.onOsc("133;A");
    shell.onInput(Buffer.from("read x\recho next\r"));
    expect(shell.onOsc("133;C")[0]).toMatchObject({ commandLine: "read x" });
    shell.onInput(Buffer.from("answer\r"));
    shell.onOsc("133;D;0");
    shell.onOsc("133;A");
    expect(shell.onOsc("133;C")[0]).toMatchObject({ commandId: "cmd-2", commandLine: "echo next" });
  });

  it("finishes a command without a status when a new prompt arrives first, and ignores a second C", () => {
    const shell = new ShellIntegration(clock().now);
    shell.onInput(Buffer.from("a\r"));
    shell.onOsc("133;C");
    expect(shell.onOsc("133;C")).toEqual([]);
    expect(shell.onOsc("133;A")).toEqual([{ kind: "command_finished", commandId: "cmd-1", durationMs: 0 }]);
    expect(shell.onOsc("133;D;0")).toEqual([]);
  });

  it("reads the working directory from OSC 7 and OSC 633;P;Cwd=", () => {
    expect(cwdFromOsc("7;file://host/tmp/with%20space/%E2%82%AC")).toBe("/tmp/with space/€");
    expect(cwdFromOsc("633;P;Cwd=/srv/a\\x3bb")).toBe("/srv/a;b");
    expect(cwdFromOsc("7;https://example.com/x")).toBeUndefined();
    expect(cwdFromOsc("0;title")).toBeUndefined();
    expect(new ShellIntegration().onOsc("7;file://h/home")).toEqual([{ kind: "cwd_changed", cwd: "/home" }]);
  });
});

describe("a pty terminal reading marks from its output", () => {
  const stream =
    osc("133;A") + "$ " + osc("133;B") + "echo hi\r\n" + osc("133;C") + "hi\r\n" + osc("133;D;0") + osc("7;file://h/tmp") + osc("133;A") + "$ ";

  function runTerminal(chunks: Buffer[]): { events: unknown[]; output: string } {
    const launcher = new FakeLauncher();
    const plan = planSpawn({ argv: ["sh"], command: "", shell: "", cwd: "", env: {}, cols: 80, rows: 24, isPty: true, title: "" }, { env: { PATH: process.env.PATH }, cwd: "/" });
    const terminal = new Terminal("t", new OutputLog(1 << 20), plan, true, { cols: 80, rows: 24 }, {});
    terminal.start(launcher);
    terminal.write(Buffer.from("echo hi\r"), false);
    for (const chunk of chunks) launcher.last().emit(chunk);
    const { events } = terminal.log.read(terminal.log.cursorAt(0), 1 << 20);
    const output = events.map(({ event }) => (event.kind === "output" ? outputBytes(event).toString() : "")).join("");
    return { events: events.filter(({ event }) => event.kind !== "output").map(({ offset, event }) => ({ offset, ...event, ...("timestampMs" in event ? { timestampMs: 0 } : {}), ...("durationMs" in event ? { durationMs: 0 } : {}) })), output };
  }

  it("finds the same events at the same offsets whether the output comes whole or one byte at a time", () => {
    const bytes = Buffer.from(stream);
    const whole = runTerminal([bytes]);
    const byteByByte = runTerminal([...bytes].map((byte) => Buffer.from([byte])));
    expect(byteByByte).toEqual(whole);
    expect(whole.output).toBe(stream);
    const offsetAfter = (marker: string): number => Buffer.byteLength(stream.slice(0, stream.indexOf(marker) + marker.length));
    expect(whole.events).toEqual([
      // Not an injected shell: detection is announced at the first command mark.
      { offset: offsetAfter(osc("133;C")), kind: "command_detection_available" },
      { offset: offsetAfter(osc("133;C")), kind: "command_executed", commandId: "cmd-1", commandLine: "echo hi", timestampMs: 0 },
      { offset: offsetAfter(osc("133;D;0")), kind: "command_finished", commandId: "cmd-1", exitCode: 0, durationMs: 0 },
      { offset: offsetAfter(osc("7;file://h/tmp")), kind: "cwd_changed", cwd: "/tmp" },
    ]);
  });
});
