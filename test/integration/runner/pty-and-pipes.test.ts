import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TerminalMode, TerminalState } from "../../../gen/terminal/v1/terminal_pb.js";
import { collect, eventually, QUIET_SHELL_ENV, runToExit, useTestRunner, waitForOutput } from "./harness.js";

const runner = useTestRunner({ retainBytes: 4096 });

const expectedPtyTerm = process.env.TERM && process.env.TERM !== "dumb" ? process.env.TERM : "xterm-256color";

describe("processes in a pty and on pipes (real processes, real HTTP/2)", () => {
  it("runs under a pty with the terminal's TERM, COLUMNS and LINES set before exec", async () => {
    const { terminal } = await runner.grpc.spawn({ command: 'echo "$TERM $COLUMNS $LINES"; stty size', cols: 91, rows: 33 });
    expect(terminal?.isPty).toBe(true);
    const { output, exit } = await runToExit(runner.grpc, terminal!.id);
    expect(output.toString()).toBe(`${expectedPtyTerm} 91 33\r\n33 91\r\n`);
    expect(exit).toEqual(expect.objectContaining({ exitCode: 0, signal: "" }));
  });

  it("runs on pipes with TERM=dumb, stdout and stderr in one log", async () => {
    const { terminal } = await runner.connect.spawn({ command: 'echo "$TERM"; echo oops >&2', mode: TerminalMode.PIPES });
    expect(terminal?.isPty).toBe(false);
    const { output, exit } = await runToExit(runner.connect, terminal!.id);
    expect(output.toString().split("\n").sort()).toEqual(["", "dumb", "oops"]);
    expect(exit?.exitCode).toBe(0);
  });

  it("runs argv word by word, with no shell in between", async () => {
    const { terminal } = await runner.grpc.spawn({ argv: ["printf", "%s|", "a b", "$HOME", "*"], mode: TerminalMode.PIPES });
    expect((await runToExit(runner.grpc, terminal!.id)).output.toString()).toBe("a b|$HOME|*|");
  });

  it("delivers a UTF-8 character split across two reads intact when the chunks are joined", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "printf '\\342'; sleep 0.3; printf '\\202\\254!'" });
    const { events, output } = await runToExit(runner.grpc, terminal!.id);
    const outputs = events.filter((event) => event.event.case === "output");
    expect(outputs.length).toBeGreaterThanOrEqual(2);
    const first = outputs[0]!.event.value as { data: Uint8Array };
    expect([...first.data]).toEqual([0xe2]);
    expect(output.toString("utf8")).toBe("€!");
  });

  it("numbers output bytes with increasing offsets and replays a gap before what retention kept", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "seq 1 3000", mode: TerminalMode.PIPES });
    const live = await runToExit(runner.grpc, terminal!.id);
    let next = 0;
    for (const event of live.events) {
      expect(Number(event.offset)).toBeGreaterThanOrEqual(next);
      if (event.event.case === "gap") next = Number(event.event.value.toOffset);
      if (event.event.case === "output") next = Number(event.offset) + event.event.value.data.length;
    }
    const replay = await runToExit(runner.grpc, terminal!.id);
    const total = 13893;
    expect(replay.events[0]!.event).toEqual({ case: "gap", value: expect.objectContaining({ fromOffset: 0n, toOffset: BigInt(total - 4096) }) });
    expect(replay.output.length).toBe(4096);
    expect(replay.output.toString().endsWith("2999\n3000\n")).toBe(true);
    const { terminal: info } = await runner.grpc.get({ id: terminal!.id });
    expect(info).toMatchObject({ startOffset: BigInt(total - 4096), endOffset: BigInt(total), state: TerminalState.EXITED });
  });

  it("replays from any offset it still retains", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "printf 'hello world'", mode: TerminalMode.PIPES });
    await runToExit(runner.grpc, terminal!.id);
    const fromSix = await collect(runner.connect.attach({ id: terminal!.id, fromOffset: 6n, follow: true }));
    expect(fromSix.output.toString()).toBe("world");
    expect(fromSix.events[0]!.offset).toBe(6n);
  });

  it("starts in a missing directory as a terminal that says why and exits 127", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "echo never", cwd: "/no/such/dir" });
    expect(terminal?.pid).toBe(0);
    const { output, exit } = await runToExit(runner.grpc, terminal!.id);
    expect(output.toString()).toBe("cannot start in /no/such/dir: no such file or directory\r\n");
    expect(exit).toEqual(expect.objectContaining({ exitCode: 127, signal: "" }));
  });

  it("starts a missing program as a terminal that says why and exits 127, on both pty and pipes", async () => {
    for (const mode of [TerminalMode.PTY, TerminalMode.PIPES]) {
      const { terminal } = await runner.grpc.spawn({ argv: ["no-such-program-here", "x"], mode });
      const { output, exit } = await runToExit(runner.grpc, terminal!.id);
      expect(output.toString()).toMatch(/^cannot run no-such-program-here: command not found\r?\n$/);
      expect(exit?.exitCode).toBe(127);
    }
  });

  it("resizes a pty so the child sees it (stty size), and records the size on pipes", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "read line; stty size; read line; stty size", env: QUIET_SHELL_ENV });
    const id = terminal!.id;
    await runner.grpc.resize({ id, cols: 73, rows: 19 });
    await runner.grpc.write({ id, data: Buffer.from("\r") });
    await waitForOutput(runner.grpc, id, /19 73\r\n/);
    await runner.grpc.resize({ id, cols: 132, rows: 43 });
    await runner.grpc.write({ id, data: Buffer.from("\r") });
    const { output, events } = await runToExit(runner.grpc, id);
    expect(output.toString()).toMatch(/19 73\r\n[\s\S]*43 132\r\n$/);
    expect(events.filter((e) => e.event.case === "resized").map((e) => e.event.value)).toEqual([
      expect.objectContaining({ cols: 73, rows: 19 }),
      expect.objectContaining({ cols: 132, rows: 43 }),
    ]);

    const pipes = (await runner.grpc.spawn({ command: "sleep 30", mode: TerminalMode.PIPES })).terminal!;
    await runner.grpc.resize({ id: pipes.id, cols: 100, rows: 50 });
    expect((await runner.grpc.get({ id: pipes.id })).terminal).toMatchObject({ cols: 100, rows: 50 });
  });

  it("passes ^C to the line discipline under a pty, which interrupts the foreground program", async () => {
    const { terminal } = await runner.grpc.spawn({ argv: ["cat"] });
    await runner.grpc.write({ id: terminal!.id, data: Buffer.from("typed\r") });
    await waitForOutput(runner.grpc, terminal!.id, /typed\r\ntyped\r\n/);
    await runner.grpc.write({ id: terminal!.id, data: Buffer.from([0x03]) });
    expect((await runToExit(runner.grpc, terminal!.id)).exit).toEqual(expect.objectContaining({ exitCode: 128, signal: "SIGINT" }));
  });

  it("turns ^C on pipes into SIGINT for the child's own process group, never the runner's", async () => {
    const script = "trap 'echo interrupted; exit 7' INT; echo ready; while :; do sleep 0.05; done";
    const { terminal } = await runner.grpc.spawn({ command: script, mode: TerminalMode.PIPES });
    const pid = terminal!.pid;
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [, , pgid, sid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number) as number[];
    expect({ pgid, sid }).toEqual({ pgid: pid, sid: pid });
    expect(pgid).not.toBe(process.pid);
    await waitForOutput(runner.grpc, terminal!.id, /ready\n/);
    await runner.grpc.write({ id: terminal!.id, data: Buffer.from("before\x03after") });
    const { output, exit } = await runToExit(runner.grpc, terminal!.id);
    expect(output.toString()).toBe("ready\ninterrupted\n");
    expect(exit?.exitCode).toBe(7);
  });

  it("reports end of input: closes stdin on pipes and sends ^D under a pty", async () => {
    for (const mode of [TerminalMode.PIPES, TerminalMode.PTY]) {
      const { terminal } = await runner.grpc.spawn({ argv: ["wc", "-c"], mode });
      await runner.grpc.write({ id: terminal!.id, data: Buffer.from("12345"), eof: true });
      const { output, exit } = await runToExit(runner.grpc, terminal!.id);
      expect(output.toString()).toMatch(/5\r?\n$/);
      expect(exit?.exitCode).toBe(0);
    }
  });

  it("reports a title set by OSC 2 in info and on the stream", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "printf '\\033]2;build: ok\\007'" });
    const { events } = await runToExit(runner.grpc, terminal!.id);
    expect(events.some((e) => e.event.case === "titleChanged" && e.event.value.title === "build: ok")).toBe(true);
    expect(await eventually(() => runner.registry.get(terminal!.id).snapshot().title === "build: ok")).toBe(true);
  });
});
