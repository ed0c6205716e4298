import { describe, expect, it } from "vitest";
import { AhpTestClient, rpcErrorOf } from "../support/ahp-test-client.js";
import { startServiceProcess } from "./service-process.js";

describe("npm run gateway -- --no-runner", () => {
  it("serves the protocol without terminals: no ! prefix, createTerminal refused", async () => {
    const gateway = await startServiceProcess("gateway/main.ts", ["--port", "0", "--no-runner"], { GATEWAY_TOKEN: undefined });
    try {
      const client = await AhpTestClient.connect(gateway.firstLine);
      const result = await client.call("initialize", { channel: "ahp-root://", protocolVersions: ["0.9.0"], clientId: "c", initialSubscriptions: ["ahp-root://"] });
      expect(result).not.toHaveProperty("terminalCommandPrefix");
      expect(result.snapshots[0].state.terminals).toEqual([]);
      expect(await rpcErrorOf(client.call("createTerminal", { channel: "ahp-terminal:/x" }))).toMatchObject({ code: -32601, message: "This host does not serve createTerminal yet" });
      client.close();
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
  });

  it("serves no browser console with --no-console, and still serves WebSockets", async () => {
    const gateway = await startServiceProcess("gateway/main.ts", ["--port", "0", "--no-runner", "--no-console"], { GATEWAY_TOKEN: undefined });
    try {
      const page = new URL(gateway.firstLine);
      page.protocol = "http:";
      const response = await fetch(page);
      expect(response.status).toBe(426);
      expect(await response.text()).not.toContain("<html");
      const client = await AhpTestClient.connect(gateway.firstLine);
      expect(await client.call("ping", {})).toBeDefined();
      client.close();
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
  });
});
