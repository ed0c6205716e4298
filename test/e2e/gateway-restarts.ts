import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { startServiceProcess, type ServiceProcess } from "./service-process.js";
import { useStarted } from "../support/use-started.js";

const RUNNER_TOKEN = "restarts-runner-token";

/** A runner process and a gateway in front of it that a test can kill and start again, as a crash and a supervisor would. */
export interface RestartableGateway {
  runner: RunnerProcess;
  gateway: ServiceProcess;
  /** The current gateway's WebSocket URL, with its token. */
  readonly url: string;
  home: string;
  /** Kills the gateway with SIGKILL and starts a new one on the same runner; resolves once it printed its URL. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a runner (terminals run /bin/sh in a scratch HOME) and a gateway on it. */
export async function startRestartableGateway(): Promise<RestartableGateway> {
  const home = mkdtempSync(join(tmpdir(), "restarts-"));
  const runner = await startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN], { SHELL: "/bin/sh", HOME: home, ENV: "", PS1: "$ " });
  const startGateway = () => startServiceProcess("gateway/main.ts", ["--port", "0", "--runner", runner.url, "--token", "restarts-gateway-token"], { RUNNER_TOKEN, HOME: home });
  const services: RestartableGateway = {
    runner,
    gateway: await startGateway(),
    get url() {
      return services.gateway.firstLine;
    },
    home,
    async restart() {
      await services.gateway.stop("SIGKILL");
      services.gateway = await startGateway();
    },
    async stop() {
      await services.gateway.stop("SIGKILL");
      await runner.stop("SIGKILL");
    },
  };
  return services;
}

/** A restartable gateway and its runner for the tests around the call: started before them, stopped after them. */
export function useRestartableGateway(): RestartableGateway {
  return useStarted("the restartable gateway", startRestartableGateway, (services) => services.stop());
}
