import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AhpTestClient } from "../../support/ahp-test-client.js";
import { capturedLog } from "../../support/captured-log.js";
import { eventually } from "../../support/eventually.js";
import { rawGet, rawSocket } from "../../support/raw-http.js";
import { useTestGateway } from "./harness.js";

const PER_ADDRESS = 3;
const TOTAL = 5;

const { log, lines } = capturedLog();
// Idle sockets are kept for the whole test: they count until they close.
const gateway = useTestGateway({ withRunner: false, log, socketLimits: { maxConnections: TOTAL, maxConnectionsPerAddress: PER_ADDRESS, headersTimeoutMs: 60_000 } });

const idle: Socket[] = [];
afterEach(async () => {
  for (const socket of idle.splice(0)) socket.destroy();
  // The gateway counts them out once it sees them close.
  expect(await eventually(async () => (await rawGet(gateway.gateway.port, "/healthz", { localAddress: "127.0.0.9" })).status === 200)).toBe(true);
});

/** Opens `count` sockets from `localAddress` that send nothing, and waits until the gateway counted them. */
async function openIdle(count: number, localAddress: string): Promise<void> {
  for (let i = 0; i < count; i++) idle.push(await rawSocket(gateway.gateway.port, localAddress));
  // Nothing to wait for: the gateway takes connections in the order they were made, so it has counted these before it sees the next one.
}

const warnings = (text: string): Array<Record<string, unknown>> => lines.filter((line) => line.level === 40 && String(line.msg).includes(text));

describe("connections from one address", () => {
  it("past --max-connections-per-address are refused with 503 and Retry-After, plain requests and upgrades alike; other addresses get in", async () => {
    await openIdle(PER_ADDRESS, "127.0.0.1");
    const plain = await rawGet(gateway.gateway.port, "/healthz", { localAddress: "127.0.0.1" });
    expect(plain.status).toBe(503);
    expect(plain.headers["retry-after"]).toBe("5");
    expect(plain.body).toBe(`Too many connections: your address has ${PER_ADDRESS} connections open, the limit for one address. Try again later.\n`);
    const upgrade = await rawGet(gateway.gateway.port, `/?tkn=${gateway.token}`, { localAddress: "127.0.0.1", upgrade: true });
    expect(upgrade.status).toBe(503);
    await expect(AhpTestClient.connect(gateway.url)).rejects.toThrow("HTTP 503");
    expect((await rawGet(gateway.gateway.port, "/healthz", { localAddress: "127.0.0.2" })).status).toBe(200);
    // Three refusals, one line (the next ones within ten seconds are counted into the line after).
    expect(warnings("too many open from one address")).toEqual([expect.objectContaining({ address: "127.0.0.1", open: PER_ADDRESS, limit: PER_ADDRESS })]);
  });

  it("get in again once one of theirs closed", async () => {
    await openIdle(PER_ADDRESS, "127.0.0.1");
    expect((await rawGet(gateway.gateway.port, "/healthz", { localAddress: "127.0.0.1" })).status).toBe(503);
    idle.shift()!.destroy();
    expect(await eventually(async () => (await rawGet(gateway.gateway.port, "/healthz", { localAddress: "127.0.0.1" })).status === 200)).toBe(true);
    const client = await AhpTestClient.initialized(gateway.url);
    expect(await client.call("ping")).toBeNull();
    client.close();
  });
});

describe("connections in total", () => {
  it("past --max-connections are refused with 503 from any address, WebSockets counted with plain sockets", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    await openIdle(2, "127.0.0.1");
    await openIdle(TOTAL - 3, "127.0.0.2");
    const refused = await rawGet(gateway.gateway.port, "/readyz", { localAddress: "127.0.0.3" });
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("5");
    expect(refused.body).toContain(`the gateway has ${TOTAL} connections open, its limit`);
    expect(warnings("too many open (--max-connections")).toEqual([expect.objectContaining({ address: "127.0.0.3", open: TOTAL, limit: TOTAL })]);
    // The connections it holds are unharmed.
    expect(await client.call("ping")).toBeNull();
    client.close();
  });
});
