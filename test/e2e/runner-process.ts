import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { runServiceToExit, startServiceProcess, type ServiceProcess } from "./service-process.js";

export { ROOT } from "./service-process.js";

/** A runner started as its own process, as users run it. */
export interface RunnerProcess extends ServiceProcess {
  url: string;
  /** A gRPC client that sends `token` (when given). */
  client(token?: string): Client<typeof TerminalService>;
}

/** Starts `services/runner/main.ts` (through `launcher`, as startServiceProcess) and resolves once it has printed its URL. */
export async function startRunnerProcess(args: string[], env: NodeJS.ProcessEnv = {}, launcher: string[] = []): Promise<RunnerProcess> {
  const service = await startServiceProcess("services/runner/main.ts", args, env, launcher);
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

/** Runs the runner to completion (for flags that make it exit). */
export function runRunnerToExit(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runServiceToExit("services/runner/main.ts", args);
}
