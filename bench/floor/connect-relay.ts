import { connect as tcpConnect, type AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { WebSocketServer } from "ws";
import { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { programOf, SOCKET_BACKLOG_BYTES } from "./bare-wire.js";

/**
 * The gateway of the two-process shape with connect in it and nothing else: a WebSocket server
 * whose every connection is one terminal of bench/floor/connect-pty-host.ts, reached through the
 * client generated from proto/terminal/v1 over one HTTP/2 connection (Spawn, then Attach for its
 * output and one WriteStream for its input), as the gateway reaches the runner. Messages are relayed
 * unparsed: no AHP, no state. Argument: the pty host's URL. The connection's path names the program
 * (bare-wire.ts).
 */
const hostUrl = new URL(process.argv[2]!);
const sessionManager = new Http2SessionManager(hostUrl, undefined, {
  createConnection: () => tcpConnect({ host: hostUrl.hostname, port: Number(hostUrl.port), noDelay: true }),
});
const host = createClient(TerminalService, createGrpcTransport({ baseUrl: hostUrl.href, sessionManager }));

/** Input for one WriteStream: messages queued as they come, taken as the stream asks. */
async function* inputOf(id: string, queue: Uint8Array[], wait: (wake: () => void) => void, closed: () => boolean): AsyncGenerator<{ id: string; data: Uint8Array }> {
  for (;;) {
    const data = queue.shift();
    if (data) yield { id, data };
    else if (closed()) return;
    else await new Promise<void>(wait);
  }
}

const server = new WebSocketServer({ port: 0, host: "127.0.0.1", perMessageDeflate: false });
server.on("connection", (socket, request) => {
  const { file, args } = programOf(request.url ?? "/");
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const abort = new AbortController();
  socket.on("message", (data: Buffer) => {
    queue.push(data);
    wake?.();
  });
  socket.on("close", () => {
    closed = true;
    wake?.();
    abort.abort();
  });
  void (async () => {
    const { terminal } = await host.spawn({ argv: [file, ...args] });
    const id = terminal!.id;
    void host.writeStream(inputOf(id, queue, (resolve) => (wake = resolve), () => closed), { signal: abort.signal }).catch(() => {});
    for await (const response of host.attach({ id, follow: true }, { signal: abort.signal })) {
      if (response.event.case !== "output") continue;
      const { data } = response.event.value;
      // A flood's bytes wait in the HTTP/2 stream (and so in the pty host) while the socket is behind.
      if (socket.bufferedAmount < SOCKET_BACKLOG_BYTES) socket.send(data);
      else await new Promise((resolve) => socket.send(data, resolve));
    }
  })().catch(() => socket.close());
});
server.on("listening", () => process.stdout.write(`ws://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
