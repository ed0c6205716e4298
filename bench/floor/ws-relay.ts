import { connect } from "node:http2";
import { connect as tcpConnect, type AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { sendPaced } from "./bare-wire.js";

/**
 * The least a gateway process can be: a WebSocket server that relays each connection's messages,
 * unparsed, onto one HTTP/2 stream to bench/floor/pty-host.ts, and that stream's bytes back as
 * WebSocket messages. Argument: the pty host's URL. The connection's path names the program
 * (bare-wire.ts) and is the stream's path as it is.
 */
const hostUrl = new URL(process.argv[2]!);
const session = connect(hostUrl, { createConnection: () => tcpConnect({ host: hostUrl.hostname, port: Number(hostUrl.port), noDelay: true }) });
const server = new WebSocketServer({ port: 0, host: "127.0.0.1", perMessageDeflate: false });
server.on("connection", (socket, request) => {
  const stream = session.request({ ":method": "POST", ":path": request.url ?? "/" });
  // A flood's bytes wait in the HTTP/2 stream (and so in the pty host) while the socket is behind.
  stream.on("data", (chunk: Buffer) => sendPaced(socket, chunk, stream));
  socket.on("message", (data: Buffer) => stream.write(data));
  socket.on("close", () => stream.close());
  stream.on("close", () => socket.close());
});
server.on("listening", () => process.stdout.write(`ws://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
