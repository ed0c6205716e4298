import type { Client } from "@connectrpc/connect";
import { connectRunner } from "../gateway/runners/runner-client.js";
import type { TerminalService } from "../gen/terminal/v1/terminal_pb.js";

/**
 * A gRPC client for a runner, exactly as the gateway reaches its runners (one HTTP/2 connection,
 * Nagle off, the gateway's receive windows), so the runner's own paths are measured as the product
 * uses them.
 */
export function benchRunnerClient(url: string, token: string): Client<typeof TerminalService> {
  return connectRunner(url, token).terminals;
}
