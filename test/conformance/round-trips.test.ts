import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ActionLog } from "../../gateway/state/action-log.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { errorFrame, notificationFrame, parseMessage, resultFrame } from "../../ahp/json-rpc.js";

const DIR = join(import.meta.dirname, "fixtures/0.6.0/test-cases/round-trips");
const fixture = (name: string) => JSON.parse(readFileSync(join(DIR, name), "utf8")) as { input: any; acceptableOutputs: unknown[] };

describe("official round-trip fixtures (protocol 0.6.0)", () => {
  it("008: reads a request and writes nothing it did not receive", () => {
    const { input } = fixture("008-jsonrpc-request.json");
    expect(parseMessage(JSON.stringify(input))).toEqual({ kind: "request", id: input.id, method: input.method, params: input.params });
  });

  it("009: reads a notification (no id)", () => {
    const { input } = fixture("009-jsonrpc-notification.json");
    expect(parseMessage(JSON.stringify(input))).toEqual({ kind: "notification", method: input.method, params: input.params });
  });

  it("010: writes a success response the fixture accepts", () => {
    const { input, acceptableOutputs } = fixture("010-jsonrpc-success.json");
    expect(acceptableOutputs).toContainEqual(JSON.parse(resultFrame(input.id, input.result)));
  });

  it("011: writes an error response the fixture accepts", () => {
    const { input, acceptableOutputs } = fixture("011-jsonrpc-error.json");
    const { code, message, data } = input.error;
    expect(acceptableOutputs).toContainEqual(JSON.parse(errorFrame(input.id, new JsonRpcError(code, message, data))));
  });

  it("025 and 026: a server envelope omits origin (never null); a client one carries it", () => {
    const log = new ActionLog();
    const server = log.append("ahp-terminal:/t", { type: "terminal/data", data: "x" });
    expect("origin" in server).toBe(false);
    expect(JSON.parse(notificationFrame("action", server)).params).not.toHaveProperty("origin");
    const client = log.append("ahp-terminal:/t", { type: "terminal/cleared" }, { clientId: "c1", clientSeq: 4 });
    expect(client.origin).toEqual({ clientId: "c1", clientSeq: 4 });
    expect(fixture("025-action-envelope-origin-absent.json").acceptableOutputs[0]).not.toHaveProperty("origin");
  });
});
