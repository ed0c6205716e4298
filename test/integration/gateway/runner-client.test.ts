import http2 from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import { connectRunner } from "../../../gateway/runners/runner-client.js";
import { listen } from "../../../lib/listen.js";

let server: http2.Http2Server | undefined;
afterEach(async () => {
  server?.close();
  server = undefined;
});

describe("the gateway's connection to a runner", () => {
  it("opens a 64 MiB receive window for the connection every terminal shares, and keeps 64 KiB per stream", async () => {
    const seen = new Promise<{ connection: number | undefined; stream: number | undefined }>((resolve) => {
      server = http2.createServer((request, response) => {
        const { session } = request.stream;
        // The window update follows the request's headers; a ping round trip lets it land.
        session!.ping(() => {
          resolve({ connection: session!.state.remoteWindowSize, stream: session!.remoteSettings.initialWindowSize });
          response.writeHead(200, { "content-type": "application/grpc" }).end();
        });
      });
    });
    const { port } = await listen(server!, 0, "127.0.0.1");
    const runner = connectRunner(`http://127.0.0.1:${port}`, "token");
    await runner.health.check({}).catch(() => undefined);
    expect(await seen).toEqual({ connection: 64 * 1024 * 1024, stream: 64 * 1024 - 1 });
  });
});
