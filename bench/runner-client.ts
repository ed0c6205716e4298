import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TerminalService } from "../gen/terminal/v1/terminal_pb.js";

/** A gRPC client for a runner, from the generated code, as any other service would call it. */
export function benchRunnerClient(url: string, token: string): Client<typeof TerminalService> {
  return createClient(
    TerminalService,
    createGrpcTransport({
      baseUrl: url,
      interceptors: [
        (next) => (request) => {
          request.header.set("authorization", `Bearer ${token}`);
          return next(request);
        },
      ],
    }),
  );
}
