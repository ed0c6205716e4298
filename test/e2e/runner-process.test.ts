import { readFileSync } from "node:fs";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { TerminalMode } from "../../gen/terminal/v1/terminal_pb.js";
import { eventually } from "../support/eventually.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";

const started: RunnerProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((runner) => runner.stop("SIGKILL")));
});

async function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunnerProcess> {
  const runner = await startRunnerProcess(args, env);
  started.push(runner);
  return runner;
}

function groupIsGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return readFileSync(`/proc/${pgid}/stat`, "utf8").split(") ")[1]!.startsWith("Z");
  } catch {
    return true;
  }
}

describe("the runner process", () => {
  it("prints its base URL first, binds loopback, and prints the token it generated", async () => {
    const runner = await start(["--port", "0"], { RUNNER_TOKEN: undefined });
    expect(runner.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const tokenLine = (): string | undefined => runner.stdoutLines.find((line) => line.startsWith("RUNNER_TOKEN="));
    expect(await eventually(() => tokenLine() !== undefined)).toBe(true);
    const token = tokenLine()!.slice("RUNNER_TOKEN=".length);
    await expect(runner.client(token).list({})).resolves.toBeDefined();
    await expect(runner.client("wrong").list({})).rejects.toMatchObject({ code: Code.Unauthenticated });
  });

  it("takes the token from RUNNER_TOKEN and logs JSON lines to stderr", async () => {
    const runner = await start(["--port", "0"], { RUNNER_TOKEN: "from-env" });
    await expect(runner.client("from-env").list({})).resolves.toBeDefined();
    const listening = runner.stderrLines.map((line) => JSON.parse(line) as { msg: string }).find((entry) => entry.msg === "runner listening");
    expect(listening).toMatchObject({ url: runner.url, auth: true });
    expect(runner.stdoutLines).toEqual([]);
  });

  it("serves without a token only with --insecure, and says so on stderr", async () => {
    const runner = await start(["--port", "0", "--insecure"]);
    await expect(runner.client().list({})).resolves.toBeDefined();
    expect(runner.stderrLines.join("\n")).toMatch(/--insecure: every RPC is accepted without a token/);
  });

  it("on SIGTERM closes every terminal, tells attached streams they exited, and exits 0", async () => {
    const runner = await start(["--port", "0", "--token", "t", "--close-grace-ms", "500"]);
    const client = runner.client("t");
    const shells = await Promise.all([
      client.spawn({ command: "sleep 100 & echo started; sleep 100", mode: TerminalMode.PIPES }),
      client.spawn({ command: "trap '' TERM; echo started; sleep 100" }),
    ]);
    const seen = shells.map((): string[] => []);
    const streams = shells.map(async ({ terminal }, index) => {
      const cases = seen[index]!;
      try {
        for await (const event of client.attach({ id: terminal!.id, follow: true })) cases.push(event.event.case!);
      } catch (err) {
        cases.push(`error:${ConnectError.from(err).code}`);
      }
      return cases;
    });
    // Both streams are attached, and both shells are past their set-up (the trap is in place).
    expect(await eventually(() => seen.every((cases) => cases.includes("output")))).toBe(true);
    expect(await runner.stop("SIGTERM")).toBe(0);
    for (const cases of await Promise.all(streams)) expect(cases).toContain("exited");
    for (const { terminal } of shells) expect(groupIsGone(terminal!.pid)).toBe(true);
    expect(runner.stderrLines.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
  });
});
