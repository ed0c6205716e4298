import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { spawnRaw } from "../raw-pty.js";
import { programOf, sendPaced } from "./bare-wire.js";

/**
 * One process holding both the WebSocket server and node-pty, as a single-process terminal server
 * is built: each connection is one pty, running the program its URL names (bare-wire.ts); messages
 * go to it unparsed and its output comes back as messages.
 */
const server = new WebSocketServer({ port: 0, host: "127.0.0.1", perMessageDeflate: false });
server.on("connection", (socket, request) => {
  const { file, args } = programOf(request.url ?? "/");
  const terminal = spawnRaw(file, args, process.env);
  terminal.onData((text) => sendPaced(socket, text, terminal.pty));
  socket.on("message", (data: Buffer) => terminal.write(data.toString("utf8")));
  socket.on("close", () => terminal.kill());
});
server.on("listening", () => process.stdout.write(`ws://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
