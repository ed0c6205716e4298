import { createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { spawnRaw } from "../raw-pty.js";
import { programOf } from "./bare-wire.js";

/**
 * The least a runner process can be: an h2c server whose every request stream is one pty, running
 * the program its path names (bare-wire.ts). The request body goes to the pty as it comes, the
 * pty's output goes back on the response as it comes; no framing, no encoding, no log. The only
 * flow control is HTTP/2's own: the pty pauses while the stream's buffer is full. Started by
 * bench/floor.ts; the shell environment is this process's own (the bench passes shellEnv()).
 */
const server = createServer();
server.on("connection", (socket) => socket.setNoDelay(true));
server.on("stream", (stream, headers) => {
  const { file, args } = programOf(String(headers[":path"] ?? "/"));
  const terminal = spawnRaw(file, args, process.env);
  stream.respond({ ":status": 200 });
  terminal.onData((text) => {
    if (!stream.write(text)) terminal.pty.pause();
  });
  stream.on("drain", () => terminal.pty.resume());
  stream.on("data", (chunk: Buffer) => terminal.write(chunk.toString("utf8")));
  stream.on("close", () => terminal.kill());
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
