import type { AddressInfo, Server } from "node:net";

/** Starts `server` listening and returns where it is bound, with an IPv6 address bracketed for use in a URL. */
export async function listen(server: Server, port: number, host: string): Promise<{ host: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const { address, port: bound } = server.address() as AddressInfo;
  return { host: address.includes(":") ? `[${address}]` : address, port: bound };
}
