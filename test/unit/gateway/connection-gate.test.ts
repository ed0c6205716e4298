import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { ConnectionGate } from "../../../gateway/wire/connection-gate.js";
import { DESCRIPTOR_RESERVE } from "../../../gateway/wire/descriptor-budget.js";
import { capturedLog } from "../../support/captured-log.js";

/** Just enough of an accepted socket for the gate: an address, a port, close and destroy. */
function fakeSocket(port: number): Socket & { closeNow(): void } {
  const socket = Object.assign(new EventEmitter(), {
    remoteAddress: "10.0.0.1",
    remotePort: port,
    destroyed: false,
    destroy() {
      socket.destroyed = true;
      return socket;
    },
    closeNow: () => socket.emit("close"),
  });
  return socket as unknown as Socket & { closeNow(): void };
}

describe("ConnectionGate", () => {
  it("lets refused sockets linger to read their 503 only while few are open, so refusals cannot exhaust the descriptors themselves", () => {
    const { log } = capturedLog();
    const gate = new ConnectionGate({ headersTimeoutMs: 60_000, maxConnections: 2, maxConnectionsPerAddress: 10 }, log, 2);
    const sockets = Array.from({ length: 2 + DESCRIPTOR_RESERVE }, (_, i) => fakeSocket(1000 + i));
    const verdicts = sockets.map((socket) => ({ refusal: gate.admit(socket), linger: gate.refusedMayLinger() }));
    expect(verdicts.filter(({ refusal }) => refusal === undefined)).toHaveLength(2);
    const refused = verdicts.filter(({ refusal }) => refusal !== undefined);
    expect(refused.filter(({ linger }) => linger)).toHaveLength(DESCRIPTOR_RESERVE / 2);
    expect(refused.at(-1)?.linger).toBe(false);
    // Once the refused ones are closed, the next refusal may linger again.
    for (const socket of sockets.slice(2)) socket.closeNow();
    const late = fakeSocket(9999);
    expect(gate.admit(late)).toMatch(/limit/);
    expect(gate.refusedMayLinger()).toBe(true);
    for (const socket of [...sockets.slice(0, 2), late]) socket.closeNow();
  });
});
