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
});
