import { existsSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { describe, expect, it } from "vitest";
import { TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { parseAutogroup } from "../../../services/runner/process/niceness.js";
import { processEntry } from "../../support/processes.js";
import { processGroupMembers, useTestRunner, type TestRunner } from "./harness.js";

/** The niceness of a process, as the kernel reports it. */
const niceOf = (pid: number): number | undefined => processEntry(pid)?.nice;

const autogroupOf = (pid: number | "self") => parseAutogroup(readFileSync(`/proc/${pid}/autogroup`, "utf8"));
const HAS_AUTOGROUP = existsSync("/proc/self/autogroup");

/** Spawns a program that starts a child and waits, and returns the terminal's pid and its child's, once the child runs. */
async function spawnWithChild(runner: TestRunner, mode: TerminalMode): Promise<{ pid: number; child: number; id: string }> {
  const { terminal } = await runner.grpc.spawn({ argv: ["/bin/sh", "-c", "sleep 30 & wait"], mode });
  const pid = terminal!.pid;
  let child = 0;
  await expect.poll(() => (child = processGroupMembers(pid, false).find((member) => member !== pid) ?? 0)).toBeGreaterThan(0);
  return { pid, child, id: terminal!.id };
}

describe("terminals' CPU priority below the runner's", () => {
  const runner = useTestRunner({ processNice: 10 });
  const asRunner = useTestRunner();

  it("with --process-nice 10: 10 nicer, on a pty and on pipes, and so does every process they start; the runner's own priority and session group stay", async () => {
    const ownNice = getPriority(0);
    const ownGroup = HAS_AUTOGROUP ? autogroupOf("self") : undefined;
    for (const mode of [TerminalMode.PTY, TerminalMode.PIPES]) {
      const { pid, child, id } = await spawnWithChild(runner, mode);
      try {
        expect(niceOf(pid)).toBe(Math.min(19, ownNice + 10));
        expect(niceOf(child)).toBe(Math.min(19, ownNice + 10));
        if (ownGroup) {
          // The terminal leads a session, so it has a group of its own; that group is lowered, the runner's is not.
          await expect.poll(() => autogroupOf(pid)).toEqual({ group: expect.not.stringMatching(`^${ownGroup.group}$`), nice: Math.min(19, ownGroup.nice + 10) });
          expect(autogroupOf(child)).toEqual(autogroupOf(pid));
          expect(autogroupOf("self")).toEqual(ownGroup);
        }
      } finally {
        await runner.grpc.close({ id });
      }
    }
  });

  it("by default, as nice as the runner", async () => {
    const { pid, child, id } = await spawnWithChild(asRunner, TerminalMode.PTY);
    try {
      expect(niceOf(pid)).toBe(getPriority(0));
      expect(niceOf(child)).toBe(getPriority(0));
      if (HAS_AUTOGROUP) expect(autogroupOf(pid)?.nice).toBe(0);
    } finally {
      await asRunner.grpc.close({ id });
    }
  });
});
