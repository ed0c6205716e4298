import { connect, createServer, type Socket } from "node:net";
import { listen } from "../../lib/listen.js";

/** A TCP relay that passes the server's bytes to the client at a set rate, as a slow link or a slow reader would take them. */
export interface ThrottledProxy {
  port: number;
  /** Bytes per second relayed from the server to each client; 0 stops reading the server at all. */
  setRate(bytesPerSecond: number): void;
  close(): Promise<void>;
}

/** Relays 127.0.0.1:(a free port) to `targetPort`; client-to-server bytes pass at once. */
export async function startThrottledProxy(targetPort: number, bytesPerSecond: number): Promise<ThrottledProxy> {
  let rate = bytesPerSecond;
  const upstreams = new Set<Socket>();
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    track(client);
    track(upstream);
    upstreams.add(upstream);
    upstream.once("close", () => upstreams.delete(upstream));
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      client.write(chunk);
      // Each chunk costs its share of a second: reading stops until then.
      upstream.pause();
      if (rate > 0) setTimeout(() => upstream.resume(), (chunk.length / rate) * 1000);
    });
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  });
  const { port } = await listen(server, 0, "127.0.0.1");
  return {
    port,
    setRate(bytesPerSecond) {
      const resumed = rate === 0 && bytesPerSecond > 0;
      rate = bytesPerSecond;
      if (resumed) for (const upstream of upstreams) upstream.resume();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
