import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it, vi } from "vitest";
import { TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { processTable } from "../../support/processes.js";
import { eventually, runToExit, useTestRunner } from "./harness.js";

// As an unpatched node-pty leaves its masters: every descriptor reads as inheritable.
vi.mock("../../../services/runner/process/inheritable-descriptors.js", async (original) => ({
  ...(await original<typeof import("../../../services/runner/process/inheritable-descriptors.js")>()),
  isCloseOnExec: () => false,
}));

const MODULE = resolve(import.meta.dirname, "../../../services/runner/process/inheritable-descriptors.ts");
/** A descriptor the child below is started with, as a shell may leave one; node marks only the lowest few close-on-exec itself. */
const INHERITED_FD = 41;

/** Runs `script` (with the module as `m`) in a node process that holds INHERITED_FD without close-on-exec; returns what it printed. */
function inChild(script: string): Promise<string> {
  const stdio = ["ignore", "pipe", "inherit", ...Array<"ignore">(INHERITED_FD - 3).fill("ignore"), "pipe"] as const;
  const child = spawn(process.execPath, ["--import", "tsx", "-e", `import(${JSON.stringify(MODULE)}).then((m) => { ${script} })`], { stdio: [...stdio] });
  let out = "";
  child.stdout!.on("data", (data: Buffer) => (out += data));
  return new Promise((done) => child.on("close", () => done(out)));
}

describe("descriptors a child would inherit", () => {
  it("are told apart from close-on-exec ones through /proc, and only they are closed", async () => {
    const printed = await inChild(`
      const own = require("node:fs").openSync("/dev/null", "r");
      const before = [m.isCloseOnExec(${INHERITED_FD}), m.isCloseOnExec(own)];
      const closed = m.closeInheritedDescriptors().map(({ fd, target }) => [fd, target]);
      console.log(JSON.stringify({ before, closed, after: [m.isCloseOnExec(${INHERITED_FD}), m.isCloseOnExec(own)] }));
    `);
    const { before, closed, after } = JSON.parse(printed) as { before: unknown[]; closed: Array<[number, string]>; after: unknown[] };
    expect(before).toEqual([false, true]);
    expect(closed).toContainEqual([INHERITED_FD, expect.stringMatching(/^socket:/)]);
    expect(after).toEqual([null, true]);
  });
});

describe("a runner whose node-pty leaves masters inheritable", () => {
  const runner = useTestRunner();

  it("refuses pty terminals, naming the cause, and ends the process it had started; pipes still work", async () => {
    const marker = `${process.pid}.25`;
    const refusal = await runner.grpc.spawn({ argv: ["/bin/sleep", marker], mode: TerminalMode.PTY }).then(
      () => undefined,
      (err: unknown) => ConnectError.from(err),
    );
    expect(refusal?.code).toBe(Code.FailedPrecondition);
    expect(refusal?.rawMessage).toMatch(/master is not close-on-exec.*patch/);
    const sleeping = (): boolean =>
      processTable().some((entry) => entry.state !== "Z" && readCmdline(entry.pid) === `/bin/sleep\0${marker}\0`);
    expect(await eventually(() => !sleeping())).toBe(true);
    const { terminal } = await runner.grpc.spawn({ argv: ["/bin/echo", "on-pipes"], mode: TerminalMode.PIPES });
    expect((await runToExit(runner.grpc, terminal!.id)).output.toString()).toBe("on-pipes\n");
  });
});

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}
