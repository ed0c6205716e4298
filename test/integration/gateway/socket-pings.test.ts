import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { AhpTestClient } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { startThrottledProxy } from "../../support/throttled-proxy.js";
import { useTestGateway } from "./harness.js";

const PING_INTERVAL_MS = 300;
const PONG_TIMEOUT_MS = 1_500;
/** The longest a dead peer may go unnoticed: a ping is due, then its deadline passes, then the next check. */
const NOTICED_WITHIN_MS = PING_INTERVAL_MS + PONG_TIMEOUT_MS + 2 * PING_INTERVAL_MS + 1_000;

const gateway = useTestGateway({ socketLimits: { pingIntervalMs: PING_INTERVAL_MS, pongTimeoutMs: PONG_TIMEOUT_MS } });

/** Lets time pass. Only for proving a non-event (a peer that is not dropped): there is nothing to wait for. */
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** A bare ws client that answers no ping, initialized by hand. */
async function deafClient(): Promise<WebSocket> {
  const socket = new WebSocket(gateway.url, { autoPong: false });
  await new Promise((done) => socket.once("open", done));
  socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { channel: "ahp-root://", protocolVersions: ["0.9.0"], clientId: `deaf-${Math.random()}` } }));
  await new Promise((done) => socket.once("message", done));
  return socket;
}

describe("WebSocket pings", () => {
  it("drop a peer that answers no ping and sends nothing", async () => {
    const socket = await deafClient();
    const started = performance.now();
    const pinged = new Promise((done) => socket.once("ping", done));
    const code = await new Promise<number>((done) => socket.once("close", done));
    await pinged;
    expect(code).toBe(1006);
    expect(performance.now() - started).toBeLessThan(NOTICED_WITHIN_MS);
  });

  it("keep a peer that answers them by itself, as ws and browsers do", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    let pings = 0;
    client.socket.on("ping", () => pings++);
    await sleep(NOTICED_WITHIN_MS);
    expect(pings).toBeGreaterThan(2);
    expect(await client.call("ping")).toBeNull();
    client.close();
  });

  it("keep a peer that answers none but keeps sending: its pong may wait behind its own frames", async () => {
    const socket = await deafClient();
    let closed = false;
    socket.once("close", () => (closed = true));
    // Notifications, which get no answer: nothing but its own sending shows the peer is there.
    const sending = setInterval(() => socket.send(JSON.stringify({ jsonrpc: "2.0", method: "noSuchNotification", params: {} })), PING_INTERVAL_MS / 2);
    await sleep(NOTICED_WITHIN_MS * 1.5);
    clearInterval(sending);
    expect(closed).toBe(false);
    socket.close();
  });

  it("keep a slow reader of a flood whose pongs wait behind the output, and drop it once it stops reading", async () => {
    const uri = "ahp-terminal:/ping-flood";
    const proxy = await startThrottledProxy(gateway.gateway.port, 2 * 1024 * 1024);
    const driver = await AhpTestClient.initialized(gateway.url);
    try {
      await driver.call("createTerminal", { channel: uri });
      const slow = await AhpTestClient.initialized(gateway.url.replace(`:${gateway.gateway.port}/`, `:${proxy.port}/`));
      await slow.call("subscribe", { channel: uri });
      driver.dispatch(uri, { type: "terminal/input", data: `yes ${"flood ".repeat(20)}\r` });
      // Several pings go out while the reader is far behind: each waits behind output it reads slowly.
      await sleep(NOTICED_WITHIN_MS * 2);
      expect(slow.closeCode).toBeUndefined();
      expect(gateway.gateway.store.channels.subscriberCount(uri)).toBe(1);
      const read = slow.outputOf(uri).length;
      expect(await eventually(() => slow.outputOf(uri).length > read, 5_000)).toBe(true);
      // Now it reads nothing: neither the ping nor anything else gets through.
      proxy.setRate(0);
      const stopped = performance.now();
      expect(await eventually(() => gateway.gateway.store.channels.subscriberCount(uri) === 0, NOTICED_WITHIN_MS + 2_000)).toBe(true);
      expect(performance.now() - stopped).toBeGreaterThan(PONG_TIMEOUT_MS / 2);
    } finally {
      driver.dispatch(uri, { type: "terminal/input", data: "\u0003" });
      await driver.call("disposeTerminal", { channel: uri });
      driver.close();
      await proxy.close();
    }
  }, 30_000);
});
