import { describe, expect, it } from "vitest";
import { TerminalMode, TerminalState } from "../../../gen/terminal/v1/terminal_pb.js";
import { runToExit, useTestRunner, waitForOutput } from "./harness.js";

const runner = useTestRunner();

/** Runs of the fast-exit command; each must deliver every byte before `exited`. */
const RUNS = 200;
/** Runs going at once: enough to keep both cores busy, as a loaded runner would be. */
const CONCURRENCY = 4;

function seqOutput(n: number): string {
  let text = "";
  for (let i = 1; i <= n; i++) text += `${i}\r\n`;
  return `${text}END\r\n`;
}

describe("exit after drain", () => {
  it(`delivers all of 'seq 1 20000; echo END' before exited in ${RUNS} of ${RUNS} pty runs`, async () => {
    const expected = seqOutput(20000);
    const failures: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < RUNS) {
        next++;
        const { terminal } = await runner.grpc.spawn({ command: "seq 1 20000; echo END", mode: TerminalMode.PTY });
        const { output, events, exit } = await runToExit(runner.grpc, terminal!.id);
        const text = output.toString();
        if (text !== expected || events.at(-1)?.event.case !== "exited" || exit?.exitCode !== 0) {
          failures.push(`${text.length}/${expected.length} bytes, ends ${JSON.stringify(text.slice(-12))}`);
        }
        await runner.grpc.close({ id: terminal!.id });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(failures).toEqual([]);
  }, 240_000);

  it("reports a normal exit with its code and no signal", async () => {
    for (const mode of [TerminalMode.PTY, TerminalMode.PIPES]) {
      const { terminal } = await runner.grpc.spawn({ command: "exit 3", mode });
      expect((await runToExit(runner.grpc, terminal!.id)).exit).toEqual(expect.objectContaining({ exitCode: 3, signal: "" }));
      expect((await runner.grpc.get({ id: terminal!.id })).terminal).toMatchObject({ state: TerminalState.EXITED, exitCode: 3, signal: "" });
    }
  });

  it("reports an exit code of 0 as present, not absent", async () => {
    const { terminal } = await runner.connect.spawn({ argv: ["true"] });
    const { exit } = await runToExit(runner.connect, terminal!.id);
    expect(exit?.exitCode).toBe(0);
  });

  it("reports death by a signal as exit code 128 with the signal's name, on a pty and on pipes", async () => {
    for (const mode of [TerminalMode.PTY, TerminalMode.PIPES]) {
      const { terminal } = await runner.grpc.spawn({ argv: ["sleep", "100"], mode });
      await runner.grpc.signal({ id: terminal!.id, signal: "KILL" });
      const { exit } = await runToExit(runner.grpc, terminal!.id);
      expect(exit).toEqual(expect.objectContaining({ exitCode: 128, signal: "SIGKILL" }));
      const { terminal: info } = await runner.grpc.get({ id: terminal!.id });
      expect(info).toMatchObject({ exitCode: 128, signal: "SIGKILL" });
      expect(info?.exitedAt).toBeDefined();
    }
  });

  it("replays the retained tail and exited to an attach after the exit", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "echo done; exit 5" });
    await runToExit(runner.grpc, terminal!.id);
    const again = await runToExit(runner.connect, terminal!.id);
    expect(again.output.toString()).toBe("done\r\n");
    expect(again.exit?.exitCode).toBe(5);
  });

  it("sends exited exactly once to every subscriber", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "read line; echo got $line", mode: TerminalMode.PIPES });
    const subscribers = [runToExit(runner.grpc, terminal!.id), runToExit(runner.connect, terminal!.id), runToExit(runner.grpc, terminal!.id)];
    await runner.grpc.write({ id: terminal!.id, data: Buffer.from("x\n") });
    for (const { events, output } of await Promise.all(subscribers)) {
      expect(output.toString()).toBe("got x\n");
      expect(events.filter((event) => event.event.case === "exited")).toHaveLength(1);
    }
    await waitForOutput(runner.grpc, terminal!.id, /got x/);
  });
});
