import http from "node:http";
import https from "node:https";
import type { TlsOptions } from "node:tls";
import type { Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { listen } from "../../lib/listen.js";
import type { SocketLike } from "./connection.js";
import { sameSecret } from "../../lib/same-secret.js";

/** What the listener hands each accepted socket to, and gets back: where its frames go and what to do when it closes. */
export interface SocketHandlers {
  onFrame(text: string): void;
  onClose(): void;
}

/** An answer to a plain HTTP request: status, body and any headers beyond the defaults (plain text, nosniff). */
export interface HttpReply {
  status: number;
  body: string | Buffer;
  headers?: Record<string, string>;
}

/** Where to listen, the connection token, the largest frame accepted, and who takes accepted sockets. */
export interface ListenerOptions {
  host: string;
  port: number;
  token: string;
  maxFrameBytes: number;
  accept(socket: SocketLike): SocketHandlers;
  /** TLS options: serve https and wss instead of http and ws (with `ca` and `requestCert`, clients need certificates). */
  tls?: TlsOptions;
  /** Plain HTTP GET (and HEAD) routes served without the token: health probes and the console's static files. */
  routes?: Record<string, () => Promise<HttpReply>>;
}

/** A listening gateway: its WebSocket URL (with the token) and a way to stop it. */
export interface Listener {
  url: string;
  port: number;
  /** Stops accepting and closes every socket with 1001 (going away). */
  close(): Promise<void>;
}

/** Headers every plain HTTP answer starts from. */
const PLAIN_TEXT = { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" };

/** WebSocket close code when the gateway shuts down. */
const CLOSE_GOING_AWAY = 1001;

/**
 * The gateway's HTTP server and WebSocket endpoint (any path). The connection token is checked at
 * the upgrade, as `?tkn=` (all VS Code can send) or `Authorization: Bearer`; a missing or wrong
 * one gets HTTP 401 before any JSON-RPC. Frames above `maxFrameBytes` close the socket with 1009.
 */
export async function startListener(options: ListenerOptions): Promise<Listener> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxFrameBytes, perMessageDeflate: false });
  const onRequest = (request: http.IncomingMessage, response: http.ServerResponse): void => {
    const path = new URL(request.url ?? "/", "http://gateway").pathname;
    const readOnly = request.method === "GET" || request.method === "HEAD";
    const route = readOnly && options.routes && Object.hasOwn(options.routes, path) ? options.routes[path] : undefined;
    if (!route) {
      response.writeHead(426, { ...PLAIN_TEXT, upgrade: "websocket" });
      response.end("This is an Agent Host Protocol endpoint: connect with a WebSocket.\n");
      return;
    }
    route().then(
      ({ status, body, headers }) => {
        response.writeHead(status, { ...PLAIN_TEXT, "content-length": Buffer.byteLength(body), ...headers });
        response.end(request.method === "HEAD" ? undefined : body);
      },
      () => response.writeHead(500, PLAIN_TEXT).end("error\n"),
    );
  };
  const server = options.tls ? https.createServer(options.tls, onRequest) : http.createServer(onRequest);
  server.on("upgrade", (request, socket: Socket, head) => {
    if (!tokenMatches(request, options.token)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nmissing or wrong connection token\n");
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, options));
  });
  const { host, port } = await listen(server, options.port, options.host);
  return {
    url: `${options.tls ? "wss" : "ws"}://${host}:${port}/?tkn=${encodeURIComponent(options.token)}`,
    port,
    async close() {
      for (const ws of wss.clients) ws.close(CLOSE_GOING_AWAY, "gateway shutting down");
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

function serve(ws: WebSocket, options: ListenerOptions): void {
  const handlers = options.accept({
    send: (frame, onWritten) => ws.send(frame, onWritten),
    close: (code, reason) => ws.close(code, reason),
    terminate: () => ws.terminate(),
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
  });
  // Binary frames are read as UTF-8 JSON too, as the official client does; replies are always text.
  ws.on("message", (data: Buffer) => handlers.onFrame(data.toString("utf8")));
  ws.on("close", () => handlers.onClose());
  // ws closes the socket itself on protocol errors (1009 for an oversized frame); the event only needs a listener.
  ws.on("error", () => {});
}

function tokenMatches(request: http.IncomingMessage, token: string): boolean {
  const query = new URL(request.url ?? "/", "http://gateway").searchParams.get("tkn");
  const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "")?.[1];
  return [query, bearer].some((given) => given !== null && given !== undefined && sameSecret(given, token));
}
