import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { spawnRaw } from "../raw-pty.js";

/** Bytes a WebSocket may have unsent before its pty is paused. */
const SOCKET_BACKLOG_BYTES = 64 * 1024;

/**
 * One process holding both the WebSocket server and node-pty, as a single-process terminal server
 * is built: each connection is one pty, messages go to it unparsed and its output comes back as
 * messages. The connection URL's query names the program, as for bench/floor/ws-relay.ts.
 */
const server = new WebSocketServer({ port: 0, host: "127.0.0.1", perMessageDeflate: false });
server.on("connection", (socket, request) => {
  const query = new URL(request.url ?? "/", "http://pty").searchParams;
  const terminal = spawnRaw(query.get("file") ?? "/bin/sh", JSON.parse(query.get("args") ?? "[]") as string[], process.env);
  terminal.onData((text) => {
    socket.send(text, () => {
      if (socket.bufferedAmount < SOCKET_BACKLOG_BYTES) terminal.pty.resume();
    });
    if (socket.bufferedAmount >= SOCKET_BACKLOG_BYTES) terminal.pty.pause();
  });
  socket.on("message", (data: Buffer) => terminal.write(data.toString("utf8")));
  socket.on("close", () => terminal.kill());
});
server.on("listening", () => process.stdout.write(`ws://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
