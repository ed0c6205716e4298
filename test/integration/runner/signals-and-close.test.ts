import { describe, expect, it } from "vitest";
import { SignalTarget, TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { eventually, processGroupMembers, runToExit, useTestRunner, waitForOutput } from "./harness.js";

const runner = useTestRunner();

describe("signals", () => {
  it("reaches every process in the group with target GROUP", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "sleep 100 & sleep 100; wait", mode: TerminalMode.PIPES });
    const pgid = terminal!.pid;
    expect(await eventually(() => processGroupMembers(pgid).length === 3)).toBe(true);
    await runner.grpc.signal({ id: terminal!.id, signal: "SIGTERM", target: SignalTarget.GROUP });
    const { exit } = await runToExit(runner.grpc, terminal!.id);
    expect(exit).toEqual(expect.objectContaining({ exitCode: 128, signal: "SIGTERM" }));
    expect(await eventually(() => processGroupMembers(pgid).length === 0)).toBe(true);
  });

  it("reaches only the first process with target PROCESS", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "trap 'echo parent got USR1; exit 0' USR1; sleep 100 & wait", mode: TerminalMode.PIPES });
    const pgid = terminal!.pid;
    expect(await eventually(() => processGroupMembers(pgid).length === 2)).toBe(true);
    const sleeper = processGroupMembers(pgid).find((pid) => pid !== pgid)!;
    await runner.grpc.signal({ id: terminal!.id, signal: "USR1", target: SignalTarget.PROCESS });
    expect((await runToExit(runner.grpc, terminal!.id)).output.toString()).toBe("parent got USR1\n");
    expect(processGroupMembers(pgid)).toContain(sleeper);
    await runner.grpc.close({ id: terminal!.id, graceMs: 500 });
    expect(await eventually(() => processGroupMembers(pgid).length === 0)).toBe(true);
  });

  it("refuses unknown signal names and leaves the process alone", async () => {
    const { terminal } = await runner.grpc.spawn({ argv: ["sleep", "100"] });
    await expect(runner.grpc.signal({ id: terminal!.id, signal: "SIGBOGUS" })).rejects.toThrow(/unknown signal "SIGBOGUS"/);
    expect((await runner.grpc.get({ id: terminal!.id })).terminal?.exitCode).toBeUndefined();
  });
});

describe("close", () => {
  it("leaves no process, zombie or orphan of the group behind", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "sleep 100 & (sleep 200 &) ; sleep 300", mode: TerminalMode.PTY });
    const pgid = terminal!.pid;
    expect(await eventually(() => processGroupMembers(pgid).length >= 3)).toBe(true);
    const { terminal: closed } = await runner.grpc.close({ id: terminal!.id });
    expect(closed?.exitCode).toBe(128);
    // Nothing is left alive, and the leader (the runner's own child) was reaped: no zombie of ours.
    expect(processGroupMembers(pgid, false)).toEqual([]);
    expect(processGroupMembers(pgid)).not.toContain(pgid);
    // Orphaned members' zombies belong to init, which reaps them on its own schedule.
    expect(await eventually(() => processGroupMembers(pgid).length === 0)).toBe(true);
    await expect(runner.grpc.get({ id: terminal!.id })).rejects.toThrow(/no terminal/);
  });

  it("escalates to SIGKILL when the group ignores SIGTERM and SIGHUP", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "trap '' TERM HUP; echo ready; while :; do sleep 0.05; done", mode: TerminalMode.PIPES });
    await waitForOutput(runner.grpc, terminal!.id, /ready/);
    const { terminal: closed } = await runner.grpc.close({ id: terminal!.id, graceMs: 200 });
    expect(closed).toMatchObject({ exitCode: 128, signal: "SIGKILL" });
    expect(processGroupMembers(terminal!.pid, false)).toEqual([]);
  });

  it("ends background jobs an exited terminal left in its group", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "sleep 100 & echo started", mode: TerminalMode.PIPES });
    const { exit } = await runToExit(runner.grpc, terminal!.id);
    expect(exit?.exitCode).toBe(0);
    expect(processGroupMembers(terminal!.pid).length).toBe(1);
    await runner.grpc.close({ id: terminal!.id });
    expect(processGroupMembers(terminal!.pid, false)).toEqual([]);
  });

  it("closes a pipes flood that flow control holds for nobody: it ends on SIGTERM, without waiting on the held output", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "yes | head -c 3000000", mode: TerminalMode.PIPES });
    await waitForOutput(runner.grpc, terminal!.id, /y\ny\n/);
    // Held: the runner has stopped reading the flood (its log did not grow between two looks).
    const { log } = runner.registry.get(terminal!.id);
    let seen = -1;
    expect(await eventually(() => seen === (seen = log.endOffset))).toBe(true);
    const started = Date.now();
    const { terminal: closed } = await runner.grpc.close({ id: terminal!.id, graceMs: 10_000 });
    expect(closed).toMatchObject({ exitCode: 128, signal: "SIGTERM" });
    // Not held up by the output nobody will read (it used to take seconds of polling for it).
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("closes an interactive shell quickly: the hangup a closed terminal sends ends it", async () => {
    const { terminal } = await runner.grpc.spawn({ argv: ["bash", "--noprofile", "--norc", "-i"], env: { PS1: "$ " } });
    await waitForOutput(runner.grpc, terminal!.id, /\$ $/);
    const { terminal: closed } = await runner.grpc.close({ id: terminal!.id, graceMs: 10_000 });
    expect(closed?.signal).toBe("SIGHUP");
  });
});
