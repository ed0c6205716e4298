import { connect } from "node:http2";
import { connect as tcpConnect } from "node:net";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";

/** Bytes a WebSocket may have unsent before the relay stops reading its stream. */
const SOCKET_BACKLOG_BYTES = 64 * 1024;

/**
 * The least a gateway process can be: a WebSocket server that relays each connection's messages,
 * unparsed, onto one HTTP/2 stream to bench/floor/pty-host.ts and that stream's bytes back as
 * WebSocket messages. Argument: the pty host's URL. The connection URL's query names the program:
 * `?file=/bin/bash&args=["--rcfile","…"]`.
 */
const hostUrl = new URL(process.argv[2]!);
const session = connect(hostUrl, { createConnection: () => tcpConnect({ host: hostUrl.hostname, port: Number(hostUrl.port), noDelay: true }) });
const server = new WebSocketServer({ port: 0, host: "127.0.0.1", perMessageDeflate: false });
server.on("connection", (socket, request) => {
  const query = new URL(request.url ?? "/", "http://relay").searchParams;
  const stream = session.request({ ":method": "POST", ":path": "/pty", "x-file": query.get("file") ?? "/bin/sh", "x-args": query.get("args") ?? "[]" });
  // A flood's bytes wait in the HTTP/2 stream (and so in the pty host) while the socket has a window's worth unsent.
  stream.on("data", (chunk: Buffer) => {
    socket.send(chunk, () => {
      if (socket.bufferedAmount < SOCKET_BACKLOG_BYTES) stream.resume();
    });
    if (socket.bufferedAmount >= SOCKET_BACKLOG_BYTES) stream.pause();
  });
  socket.on("message", (data: Buffer) => stream.write(data));
  socket.on("close", () => stream.close());
  stream.on("close", () => socket.close());
});
server.on("listening", () => process.stdout.write(`ws://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
