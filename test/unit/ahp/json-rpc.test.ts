import { describe, expect, it } from "vitest";
import { JsonRpcError } from "../../../ahp/json-rpc-error.js";
import { errorFrame, notificationFrame, parseMessage, resultFrame } from "../../../ahp/json-rpc.js";

describe("JSON-RPC framing", () => {
  it("tells requests (with an id, even null or a string) from notifications (without)", () => {
    expect(parseMessage('{"jsonrpc":"2.0","id":7,"method":"ping"}')).toEqual({ kind: "request", id: 7, method: "ping", params: undefined });
    expect(parseMessage('{"jsonrpc":"2.0","id":"a-1","method":"ping","params":{}}')).toMatchObject({ kind: "request", id: "a-1" });
    expect(parseMessage('{"jsonrpc":"2.0","id":null,"method":"ping"}')).toMatchObject({ kind: "request", id: null });
    expect(parseMessage('{"jsonrpc":"2.0","method":"unsubscribe","params":{"channel":"x"}}')).toEqual({
      kind: "notification",
      method: "unsubscribe",
      params: { channel: "x" },
    });
  });

  it("answers invalid JSON with -32700 and id null", () => {
    expect(parseMessage("{oops")).toMatchObject({ kind: "invalid", id: null, error: { code: -32700 } });
  });

  it("refuses batches, non-objects, a wrong version, a missing method and a bad id with -32600", () => {
    expect(parseMessage('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')).toMatchObject({ kind: "invalid", id: null, error: { code: -32600 } });
    expect(parseMessage("42")).toMatchObject({ error: { code: -32600 } });
    expect(parseMessage('{"jsonrpc":"1.0","id":3,"method":"ping"}')).toMatchObject({ id: 3, error: { code: -32600 } });
    expect(parseMessage('{"jsonrpc":"2.0","id":4}')).toMatchObject({ id: 4, error: { code: -32600 } });
    expect(parseMessage('{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}')).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it("recognises responses to the gateway's own requests", () => {
    expect(parseMessage('{"jsonrpc":"2.0","id":1,"result":null}')).toEqual({ kind: "response" });
    expect(parseMessage('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}')).toEqual({ kind: "response" });
  });

  it("writes results (null for undefined), errors (data only when given) and notifications", () => {
    expect(JSON.parse(resultFrame(1, undefined))).toEqual({ jsonrpc: "2.0", id: 1, result: null });
    expect(JSON.parse(errorFrame("x", new JsonRpcError(-32601, "nope")))).toEqual({ jsonrpc: "2.0", id: "x", error: { code: -32601, message: "nope" } });
    expect(JSON.parse(errorFrame(null, new JsonRpcError(-32005, "v", { supportedVersions: ["0.9.0"] }))).error.data).toEqual({ supportedVersions: ["0.9.0"] });
    expect(JSON.parse(notificationFrame("action", { a: 1 }))).toEqual({ jsonrpc: "2.0", method: "action", params: { a: 1 } });
  });
});
