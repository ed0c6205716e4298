import { describe, expect, it } from "vitest";
import { AhpTestClient, rpcErrorOf } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { seededRandom } from "../../support/seeded-random.js";
import { useTestGateway } from "./harness.js";

const gateway = useTestGateway({ maxFrameBytes: 64 * 1024 });

const base = (): string => gateway.url.replace(/\?.*$/, "");

describe("the WebSocket endpoint", () => {
  it("refuses a missing or wrong token with HTTP 401 at the upgrade", async () => {
    await expect(AhpTestClient.connect(base())).rejects.toThrow("HTTP 401");
    await expect(AhpTestClient.connect(`${base()}?tkn=wrong`)).rejects.toThrow("HTTP 401");
    await expect(AhpTestClient.connect(base(), { authorization: "Bearer wrong" })).rejects.toThrow("HTTP 401");
  });

  it("accepts the token as ?tkn= on any path, or as a bearer header", async () => {
    const byQuery = await AhpTestClient.connect(`${base()}some/path?tkn=${gateway.token}`);
    const byHeader = await AhpTestClient.connect(base(), { authorization: `Bearer ${gateway.token}` });
    expect(await byQuery.call("ping")).toBeNull();
    expect(await byHeader.call("ping", { channel: "ahp-root://" })).toBeNull();
    byQuery.close();
    byHeader.close();
  });

  it("answers a plain HTTP request with 426 Upgrade Required", async () => {
    const response = await fetch(base().replace("ws:", "http:"));
    expect(response.status).toBe(426);
  });

  it("closes the socket with 1009 on a frame above the limit, and the gateway lives on", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    client.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(100 * 1024) } }));
    expect(await client.closed()).toBe(1009);
    const next = await AhpTestClient.connect(gateway.url);
    expect(await next.call("ping")).toBeNull();
    next.close();
  });
});

describe("JSON-RPC framing on the wire", () => {
  it("answers ping before initialize, with any params or none", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    expect(await client.call("ping")).toBeNull();
    expect(await client.call("ping", { anything: [1, 2] })).toBeNull();
    client.close();
  });

  it("answers invalid JSON with -32700 and id null, and a batch with -32600", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    client.sendRaw("{this is not json");
    client.sendRaw(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }]));
    await client.waitFor(() => client.frames.length >= 2);
    expect(client.frames).toEqual([
      { jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: -32700 }) },
      { jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: -32600 }) },
    ]);
    client.close();
  });

  it("refuses requests before the handshake, unknown methods with -32601, and never answers a notification", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    expect((await rpcErrorOf(client.call("subscribe", { channel: "ahp-root://" }))).code).toBe(-32600);
    await client.call("initialize", { channel: "ahp-root://", protocolVersions: ["0.6.0"], clientId: "c" });
    expect(await rpcErrorOf(client.call("createSession", {}))).toMatchObject({ code: -32601, message: "Method not found: createSession" });
    expect((await rpcErrorOf(client.call("toString"))).code).toBe(-32601);
    client.notify("noSuchNotification", {});
    client.notify("dispatchAction", "garbage");
    client.notify("unsubscribe", null);
    expect(await client.call("ping")).toBeNull();
    const replies = client.frames.filter((frame) => (frame as { id?: unknown }).id === undefined);
    expect(replies).toEqual([]);
    client.close();
  });

  it("answers dispatchAction sent as a request: null once dispatched (the outcome arrives as its envelope), -32602 for malformed params", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    const config = { type: "root/configChanged", config: { colour: "blue" } };
    expect(await client.call("dispatchAction", { channel: "ahp-root://", clientSeq: 7, action: config })).toBeNull();
    const echoed = await client.waitForEnvelope((e) => e.origin?.clientSeq === 7);
    expect(echoed).toMatchObject({ action: config });
    expect(echoed.rejectionReason).toBeUndefined();
    expect(await client.call("dispatchAction", { channel: "ahp-root://", clientSeq: 8, action: { type: "terminal/input", data: "x" } })).toBeNull();
    expect((await client.waitForEnvelope((e) => e.origin?.clientSeq === 8)).rejectionReason).toMatch(/cannot be dispatched to the root channel/);
    for (const params of [undefined, "garbage", { channel: "ahp-root://" }, { action: config }, { channel: "ahp-root://", action: [] }]) {
      expect(await rpcErrorOf(client.call("dispatchAction", params)), JSON.stringify(params)).toMatchObject({ code: -32602 });
    }
    client.close();
  });

  it("echoes string ids exactly and reads binary frames as UTF-8 JSON", async () => {
    const client = await AhpTestClient.connect(gateway.url);
    client.sendRaw(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: "req-é", method: "ping" })));
    expect(await client.waitFor((frame) => (frame as { id?: unknown }).id === "req-é")).toEqual({ jsonrpc: "2.0", id: "req-é", result: null });
    client.close();
  });

  it("answers malformed params with -32602 and survives a barrage of junk", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    expect((await rpcErrorOf(client.call("subscribe", []))).code).toBe(-32602);
    expect((await rpcErrorOf(client.call("createTerminal", { channel: 5 }))).code).toBe(-32602);
    const junk = ["null", "[]", '"x"', "{}", '{"jsonrpc":"2.0"}', '{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"channel":{"a":1}}}', "\u0000", "{".repeat(5000)];
    for (const frame of junk) client.sendRaw(frame);
    for (let i = 0; i < 50; i++) client.notify("dispatchAction", { channel: "ahp-root://", clientSeq: i, action: { type: ["x"], config: i } });
    expect(await client.call("ping")).toBeNull();
    client.close();
  });
});

describe("whatever a client sends", () => {
  it("never crashes the gateway: 2,000 seeded random messages, then it still answers", async () => {
    const random = seededRandom(12345);
    const pick = <T,>(items: T[]): T => items[Math.floor(random() * items.length)]!;
    const values = (): unknown => pick([null, 0, -1, 1e308, "", "x", "ahp-root://", "ahp-terminal:/fuzz", [], {}, { kind: "client" }, { type: "terminal/input" }, true, "\u0000"]);
    const methods = ["initialize", "reconnect", "subscribe", "unsubscribe", "createTerminal", "disposeTerminal", "dispatchAction", "ping", "listSessions", "authenticate", "__proto__", "constructor"];
    const client = await AhpTestClient.initialized(gateway.url);
    for (let i = 0; i < 2000; i++) {
      const params: Record<string, unknown> = {};
      for (const key of ["channel", "clientId", "protocolVersions", "claim", "action", "cwd", "cols", "clientSeq", "lastSeenServerSeq", "subscriptions"]) {
        if (random() < 0.4) params[key] = values();
      }
      const message: Record<string, unknown> = { jsonrpc: pick(["2.0", "2.0", "2.0", "1.0"]), method: pick(methods), params: pick([params, params, values()]) };
      if (random() < 0.6) message.id = `fuzz-${i}`;
      client.sendRaw(JSON.stringify(message));
    }
    expect(await client.call("ping")).toBeNull();
    const fresh = await AhpTestClient.initialized(gateway.url);
    expect(await fresh.call("listSessions", {})).toEqual({ items: [] });
    client.close();
    fresh.close();
  });
});

describe("sockets that go away", () => {
  it("forget their subscriptions", async () => {
    const before = gateway.gateway.store.channels.subscriberCount("ahp-root://");
    const client = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    expect(gateway.gateway.store.channels.subscriberCount("ahp-root://")).toBe(before + 1);
    client.socket.terminate();
    await client.closed();
    expect(await eventually(() => gateway.gateway.store.channels.subscriberCount("ahp-root://") === before)).toBe(true);
  });
});
