import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { runServiceToExit, startServiceProcess, type ServiceProcess, type StartOptions } from "./service-process.js";
import { useStarted } from "../support/use-started.js";

export { ROOT } from "./service-process.js";

/** A runner started as its own process, as users run it. */
export interface RunnerProcess extends ServiceProcess {
  url: string;
  /** A gRPC client that sends `token` (when given). */
  client(token?: string): Client<typeof TerminalService>;
}

/** Starts `services/runner/main.ts` (or its build, with `compiled`) and resolves once it has printed its URL. */
export async function startRunnerProcess(args: string[], env: NodeJS.ProcessEnv = {}, options: StartOptions = {}): Promise<RunnerProcess> {
  const service = await startServiceProcess("services/runner/main.ts", args, env, options);
  return {
    ...service,
    url: service.firstLine,
    client(token) {
      const auth: Interceptor = (next) => (request) => {
        if (token !== undefined) request.header.set("authorization", `Bearer ${token}`);
        return next(request);
      };
      return createClient(TerminalService, createGrpcTransport({ baseUrl: service.firstLine, interceptors: [auth] }));
    },
  };
}

/**
 * A runner process for the tests around the call (the file, or the `describe` it is called in):
 * started before them, stopped with `stopSignal` (default SIGTERM) after them. `args` may be a
 * function, called when it starts.
 */
export function useRunnerProcess(
  args: string[] | (() => string[]),
  env: NodeJS.ProcessEnv = {},
  { stopSignal, ...options }: StartOptions & { stopSignal?: NodeJS.Signals } = {},
): RunnerProcess {
  return useStarted("the runner process", () => startRunnerProcess(typeof args === "function" ? args() : args, env, options), (runner) => runner.stop(stopSignal));
}

/** Runs the runner to completion (for flags that make it exit). */
export function runRunnerToExit(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runServiceToExit("services/runner/main.ts", args);
}
