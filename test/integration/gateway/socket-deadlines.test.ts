import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../../support/ahp-test-client.js";
import { closedAfter, rawSocket } from "../../support/raw-http.js";
import { useTestGateway } from "./harness.js";

const HEADERS_TIMEOUT_MS = 300;
const INITIALIZE_TIMEOUT_MS = 600;

const gateway = useTestGateway({ withRunner: false, socketLimits: { headersTimeoutMs: HEADERS_TIMEOUT_MS, initializeTimeoutMs: INITIALIZE_TIMEOUT_MS } });

/** Lets time pass. Only for proving a non-event (a connection that is not closed): there is nothing to wait for. */
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

describe("a connection whose request does not arrive", () => {
  it("is closed once --headers-timeout-ms has passed: silent, half an upgrade, or a header a byte at a time", async () => {
    const silent = await rawSocket(gateway.gateway.port);
    const halfUpgrade = await rawSocket(gateway.gateway.port);
    halfUpgrade.write(`GET /?tkn=${gateway.token} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`);
    const trickle = await rawSocket(gateway.gateway.port);
    trickle.write("GET /healthz HTTP/1.1\r\nX-Slow: ");
    const dripping = setInterval(() => trickle.writable && trickle.write("a"), 50);
    const closed = await Promise.all([silent, halfUpgrade, trickle].map((socket) => closedAfter(socket, 5_000)));
    clearInterval(dripping);
    for (const ms of closed) expect(ms).toBeGreaterThan(HEADERS_TIMEOUT_MS / 2);
  });

  it("is not closed once its request arrived: a WebSocket outlives the headers deadline", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    await sleep(HEADERS_TIMEOUT_MS * 3);
    expect(await client.call("ping")).toBeNull();
    client.close();
  });
});

describe("a WebSocket that does not initialize", () => {
  it("is closed with 1008 after --initialize-timeout-ms, silent, pinging or sending garbage", async () => {
    const silent = await AhpTestClient.connect(gateway.url);
    const pinging = await AhpTestClient.connect(gateway.url);
    const garbage = await AhpTestClient.connect(gateway.url);
    const failedReconnect = await AhpTestClient.connect(gateway.url);
    await expect(failedReconnect.call("reconnect", { clientId: "nobody-knows-me", lastSeenServerSeq: 0 })).rejects.toThrow(/Unknown clientId/);
    const busy = setInterval(() => {
      if (pinging.closeCode === undefined) void pinging.call("ping").catch(() => {});
      if (garbage.closeCode === undefined) garbage.sendRaw("{not json");
    }, 100);
    const reasons = [silent, pinging, garbage, failedReconnect].map((client) => new Promise<string>((done) => client.socket.once("close", (_code, reason) => done(reason.toString()))));
    const codes = await Promise.all([silent, pinging, garbage, failedReconnect].map((client) => client.closed(5_000)));
    clearInterval(busy);
    expect(codes).toEqual([1008, 1008, 1008, 1008]);
    expect(await Promise.all(reasons)).toEqual(Array(4).fill(`no initialize or reconnect within ${INITIALIZE_TIMEOUT_MS} ms`));
  });

  it("is dropped soon after the closing frame when it never answers it", async () => {
    // A bare socket that upgrades, then reads everything and answers nothing, not even the closing frame.
    const socket = await rawSocket(gateway.gateway.port);
    socket.write(`GET /?tkn=${gateway.token} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    let received = "";
    socket.on("data", (data: Buffer) => (received += data.toString("latin1")));
    const ms = await closedAfter(socket, 5_000);
    expect(received).toMatch(/^HTTP\/1.1 101 /);
    // The closing frame: FIN + opcode 8, then 1008.
    expect(received).toContain("\x88");
    // Without the drop, the WebSocket library would wait 30 s for the answer.
    expect(ms).toBeGreaterThan(INITIALIZE_TIMEOUT_MS + 500);
  });

  it("stays open once initialize (or reconnect) succeeded", async () => {
    const initialized = await AhpTestClient.initialized(gateway.url, { clientId: "on-time" });
    const reconnected = await AhpTestClient.connect(gateway.url);
    await reconnected.call("reconnect", { clientId: "on-time", lastSeenServerSeq: 0 });
    await sleep(INITIALIZE_TIMEOUT_MS * 2);
    expect(await initialized.call("ping")).toBeNull();
    expect(await reconnected.call("ping")).toBeNull();
    initialized.close();
    reconnected.close();
  });
});
