import { connect, createServer, type Socket } from "node:net";
import { listen } from "../../lib/listen.js";

/** A TCP relay in front of a server whose connections a test can cut, as a network drop would. */
export interface CuttableProxy {
  port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Destroys every relayed connection, both sides. */
  cut(): void;
  /**
   * Stops relaying one way (`toServer`: what clients send; else what the server sends), dropping those
   * bytes while both sides still look connected, as a network that died unnoticed does until the cut.
   */
  stall(toServer: boolean): void;
  close(): Promise<void>;
}

/** Relays 127.0.0.1:(a free port) to `targetPort`. */
export async function startCuttableProxy(targetPort: number): Promise<CuttableProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<{ inbound: Socket; outbound: Socket }>();
  let accepted = 0;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server = createServer((inbound) => {
    accepted++;
    const outbound = connect(targetPort, "127.0.0.1");
    track(inbound);
    track(outbound);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    const pair = { inbound, outbound };
    pairs.add(pair);
    inbound.once("close", () => pairs.delete(pair));
    inbound.once("close", () => outbound.destroy());
    outbound.once("close", () => inbound.destroy());
  });
  const { port } = await listen(server, 0, "127.0.0.1");
  return {
    port,
    get accepted() {
      return accepted;
    },
    cut() {
      for (const socket of sockets) socket.destroy();
    },
    stall(toServer) {
      for (const { inbound, outbound } of pairs) {
        const [from, to] = toServer ? [inbound, outbound] : [outbound, inbound];
        from.unpipe(to);
        from.on("data", () => undefined);
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
