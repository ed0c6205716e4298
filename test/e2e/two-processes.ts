import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { startServiceProcess, type ServiceProcess } from "./service-process.js";
import { useStarted } from "../support/use-started.js";

/** Runner and gateway as two real processes, wired with a runner token, as users deploy them. */
export interface TwoProcesses {
  runner: RunnerProcess;
  gateway: ServiceProcess;
  /** The gateway's WebSocket URL with its connection token. */
  url: string;
  /** The scratch HOME the terminals' shell starts in. */
  home: string;
  stop(): Promise<void>;
}

/** Starts both; terminals run /bin/sh in a scratch HOME so nothing of this machine's rc files interferes. */
export async function startTwoProcesses(gatewayArgs: string[] = []): Promise<TwoProcesses> {
  const home = mkdtempSync(join(tmpdir(), "e2e-home-"));
  const runnerToken = "e2e-runner-token";
  const runner = await startRunnerProcess(["--port", "0", "--token", runnerToken], { SHELL: "/bin/sh", HOME: home, ENV: "", PS1: "$ " });
  const gateway = await startServiceProcess("gateway/main.ts", ["--port", "0", "--runner", runner.url, ...gatewayArgs], {
    RUNNER_TOKEN: runnerToken,
    GATEWAY_TOKEN: undefined,
    HOME: home,
  });
  return {
    runner,
    gateway,
    url: gateway.firstLine,
    home,
    async stop() {
      await gateway.stop();
      await runner.stop();
    },
  };
}

/** Both processes for the tests around the call (the file, or the `describe` it is called in): started before them, stopped after them. */
export function useTwoProcesses(gatewayArgs: string[] = []): TwoProcesses {
  return useStarted("the runner and gateway processes", () => startTwoProcesses(gatewayArgs), (system) => system.stop());
}
