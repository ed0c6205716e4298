import http from "node:http";
import { connect, type Socket } from "node:net";

/** An HTTP answer as a test reads it. */
export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A GET (or an upgrade, with `upgrade: true`) to 127.0.0.1:`port` with exactly these headers, from `localAddress` when given. */
export function rawGet(port: number, path: string, options: { headers?: Record<string, string>; localAddress?: string; upgrade?: boolean } = {}): Promise<RawAnswer> {
  const upgrade = options.upgrade ? { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" } : {};
  return new Promise((resolve, reject) => {
    const request = http.get({ host: "127.0.0.1", port, path, localAddress: options.localAddress, headers: { ...upgrade, ...options.headers }, agent: false });
    request.once("response", (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (text: string) => (body += text));
      response.once("end", () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    });
    request.once("upgrade", (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode!, headers: response.headers, body: "" });
    });
    request.once("error", reject);
  });
}

/** A TCP connection to 127.0.0.1:`port` that sends nothing unless told to. */
export function rawSocket(port: number, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Milliseconds until the server closes `socket` (rejects after `timeoutMs`). */
export function closedAfter(socket: Socket, timeoutMs = 10_000): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    if (socket.destroyed) return resolve(0);
    const timer = setTimeout(() => reject(new Error("the socket was not closed")), timeoutMs);
    socket.resume();
    socket.on("error", () => {});
    socket.once("close", () => (clearTimeout(timer), resolve(performance.now() - started)));
  });
}
