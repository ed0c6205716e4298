import { createServer, type AddressInfo, type Server } from "node:net";

/** Starts `server` listening and returns where it is bound, with an IPv6 address bracketed for use in a URL. */
export async function listen(server: Server, port: number, host: string): Promise<{ host: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const { address, port: bound } = server.address() as AddressInfo;
  return { host: address.includes(":") ? `[${address}]` : address, port: bound };
}

/**
 * A TCP port free on `host` right now, for a process that must come back at the same address after
 * a restart: any free one, or `port` itself when it is free (listen's error when it is not).
 */
export async function freePort(host = "127.0.0.1", wanted = 0): Promise<number> {
  const server = createServer();
  const { port } = await listen(server, wanted, host);
  await new Promise((resolve) => server.close(resolve));
  return port;
}
