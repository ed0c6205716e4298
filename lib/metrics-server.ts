import http from "node:http";
import type { Registry } from "prom-client";
import { listen } from "./listen.js";

/** A running metrics endpoint. */
export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `GET /metrics` in the Prometheus text format from `registry`, on a port of its own. */
export async function startMetricsServer(registry: Registry, host: string, port: number): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    if (request.method !== "GET" || new URL(request.url ?? "/", "http://metrics").pathname !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics\n");
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { "content-type": registry.contentType }).end(text),
      (err: unknown) => response.writeHead(500, { "content-type": "text/plain" }).end(`${String(err)}\n`),
    );
  });
  const bound = await listen(server, port, host);
  return {
    url: `http://${bound.host}:${bound.port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
