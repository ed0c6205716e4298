import { describe, expect, it } from "vitest";
import { JsonRpcError } from "../../../ahp/json-rpc-error.js";
import { errorFrame, messageFrom, notificationFrame, parseMessage, requestFrame, resultFrame } from "../../../ahp/json-rpc.js";

describe("JSON-RPC framing (hosts and clients alike)", () => {
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

  it("reads responses: a result (null kept as null), or an error as a JsonRpcError with its code, message and data", () => {
    expect(parseMessage('{"jsonrpc":"2.0","id":1,"result":null}')).toEqual({ kind: "result", id: 1, result: null });
    expect(parseMessage('{"jsonrpc":"2.0","id":"r","result":{"a":[1]}}')).toEqual({ kind: "result", id: "r", result: { a: [1] } });
    const refused = parseMessage('{"jsonrpc":"2.0","id":2,"error":{"code":-32008,"message":"gone","data":{"x":1}}}');
    expect(refused).toMatchObject({ kind: "error", id: 2 });
    const error = (refused as { error: JsonRpcError }).error;
    expect(error).toBeInstanceOf(JsonRpcError);
    expect([error.code, error.message, error.data]).toEqual([-32008, "gone", { x: 1 }]);
  });

  it("classifies a frame its owner already parsed the same way as its text", () => {
    for (const text of ['{"jsonrpc":"2.0","id":1,"result":7}', '{"jsonrpc":"2.0","method":"action","params":{}}', '{"jsonrpc":"2.0","id":3,"method":"ping"}', '{"id":1,"result":7}', "[]"]) {
      expect(messageFrom(JSON.parse(text))).toEqual(parseMessage(text));
    }
  });

  it("writes results (null for undefined), errors (data only when given) and notifications", () => {
    expect(JSON.parse(resultFrame(1, undefined))).toEqual({ jsonrpc: "2.0", id: 1, result: null });
    expect(JSON.parse(errorFrame("x", new JsonRpcError(-32601, "nope")))).toEqual({ jsonrpc: "2.0", id: "x", error: { code: -32601, message: "nope" } });
    expect(JSON.parse(errorFrame(null, new JsonRpcError(-32005, "v", { supportedVersions: ["0.9.0"] }))).error.data).toEqual({ supportedVersions: ["0.9.0"] });
    expect(JSON.parse(notificationFrame("action", { a: 1 }))).toEqual({ jsonrpc: "2.0", method: "action", params: { a: 1 } });
    expect(requestFrame(4, "ping")).toBe('{"jsonrpc":"2.0","id":4,"method":"ping"}');
    expect(parseMessage(requestFrame("s", "subscribe", { channel: "x" }))).toEqual({ kind: "request", id: "s", method: "subscribe", params: { channel: "x" } });
  });
});
