import { describe, expect, it } from "vitest";
import { AUTH_RESOURCE, tokenHolderAccess } from "../../../gateway/auth/access.js";
import type { GatewayServices, HandlerTables } from "../../../gateway/handlers/session.js";
import { ClientRegistry } from "../../../gateway/state/client-registry.js";
import { StateStore } from "../../../gateway/state/store.js";
import { Connection } from "../../../gateway/wire/connection.js";
import { createLogger } from "../../../lib/logger.js";
import { eventually } from "../../support/eventually.js";

/** A connection over an in-memory socket, dispatching to `handlers`; `sent` holds the frames it wrote, parsed. */
function connectionWith(handlers: HandlerTables) {
  const sent: Array<Record<string, any>> = [];
  const socket = { send: (frame: string) => void sent.push(JSON.parse(frame)), close() {}, terminate() {}, bufferedAmount: 0 };
  const services = { store: new StateStore(1_000), clients: new ClientRegistry(), access: tokenHolderAccess("t", AUTH_RESOURCE), log: createLogger("silent", "test") };
  return { connection: new Connection(socket, services as unknown as GatewayServices, handlers), sent };
}

/** What the slow handler takes: long enough that the requests after it are answered first, were they not queued. */
const SLOW_HANDLER_MS = 10;

describe("a connection's request dispatch", () => {
  it("answers from the tables it is handed, in arrival order, with ping at once and the handshake rule kept", async () => {
    const seen: unknown[] = [];
    const { connection, sent } = connectionWith({
      requests: {
        slow: { run: async () => (await new Promise((resolve) => setTimeout(resolve, SLOW_HANDLER_MS)), "slow"), beforeHandshake: true },
        fast: { run: () => "fast", beforeHandshake: true },
        later: { run: () => "later" },
      },
      notifications: { note: (params) => void seen.push(params) },
    });
    connection.receive('{"jsonrpc":"2.0","id":1,"method":"slow"}');
    connection.receive('{"jsonrpc":"2.0","id":2,"method":"fast"}');
    connection.receive('{"jsonrpc":"2.0","id":3,"method":"ping"}');
    connection.receive('{"jsonrpc":"2.0","id":4,"method":"later"}');
    connection.receive('{"jsonrpc":"2.0","id":5,"method":"initialize"}');
    connection.receive('{"jsonrpc":"2.0","method":"note","params":1}');
    expect(await eventually(() => sent.length === 5)).toBe(true);
    expect(sent.map((frame) => [frame.id, "result" in frame ? frame.result : frame.error.code])).toEqual([
      [3, null],
      [1, "slow"],
      [2, "fast"],
      [4, -32600],
      [5, -32601],
    ]);
    // Notifications wait for a handshake, which these tables cannot make.
    expect(seen).toEqual([]);
  });

  it("runs notifications from its tables once a handshake was made", async () => {
    const seen: unknown[] = [];
    const { connection } = connectionWith({
      requests: { hello: { run: (_params, session) => session.handshake("c", "1.1.0", true), beforeHandshake: true } },
      notifications: { note: (params) => void seen.push(params) },
    });
    connection.receive('{"jsonrpc":"2.0","id":1,"method":"hello"}');
    connection.receive('{"jsonrpc":"2.0","method":"note","params":7}');
    connection.receive('{"jsonrpc":"2.0","method":"other","params":8}');
    expect(await eventually(() => seen.length > 0)).toBe(true);
    expect(seen).toEqual([7]);
  });
});
