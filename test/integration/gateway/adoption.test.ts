import { describe, expect, it } from "vitest";
import { AhpTestClient, contentText } from "../../support/ahp-test-client.js";
import { startGatewayOn, useTestGateway } from "./harness.js";

const first = useTestGateway({ shell: "/bin/bash" });

describe("a new gateway in front of the same runner", () => {
  it("serves the terminals a gateway created, with the same content, command parts, claim, title and exit state", async () => {
    const client = await AhpTestClient.initialized(first.url, { clientId: "before" });
    const [running, finished] = ["ahp-terminal:/adopt-running", "ahp-terminal:/adopt-finished"];
    await client.call("createTerminal", { channel: running, name: "kept name", claim: { kind: "session", session: "ahp-session:/s", turnId: "t" } });
    await client.call("createTerminal", { channel: finished });
    for (const uri of [running, finished]) await client.call("subscribe", { channel: uri });
    client.dispatch(running, { type: "terminal/input", data: "cd /tmp && echo adopted-$((6*7))\r" });
    await client.waitForEnvelope((e) => e.channel === running && e.action.type === "terminal/commandFinished");
    client.dispatch(finished, { type: "terminal/input", data: "exit 5\r" });
    await client.waitForEnvelope((e) => e.channel === finished && e.action.type === "terminal/exited");
    const before = {
      running: (await client.call("subscribe", { channel: running })).snapshot.state,
      finished: (await client.call("subscribe", { channel: finished })).snapshot.state,
    };
    client.close();

    const second = await startGatewayOn(first.runner, first.home);
    try {
      expect(second.gateway.store.terminalRows().map((row) => row.resource).sort()).toEqual([finished, running].sort());
      // Nobody reads them through the new gateway yet: it follows neither.
      expect(second.gateway.terminals.followedCount).toBe(0);
      const again = await AhpTestClient.initialized(second.url, { clientId: "after", subscribe: ["ahp-root://"] });
      const after = async (uri: string, done: (state: any) => boolean): Promise<any> => {
        for (;;) {
          const state = (await again.call("subscribe", { channel: uri })).snapshot.state;
          if (done(state)) return state;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const runningAfter = await after(running, (state) => state.content.filter((part: { type: string }) => part.type === "command").length === 1 && contentText(state) === contentText(before.running));
      expect(runningAfter.content).toEqual(before.running.content);
      expect(runningAfter).toMatchObject({ title: "kept name", claim: { kind: "session", session: "ahp-session:/s", turnId: "t" }, cwd: "file:///tmp" });
      const finishedAfter = await after(finished, (state) => state.exitCode !== undefined);
      expect(finishedAfter.exitCode).toBe(5);
      expect(contentText(finishedAfter)).toBe(contentText(before.finished));
      // And the adopted terminal is live: input reaches it.
      again.dispatch(running, { type: "terminal/input", data: "echo still-$((1+1))\r" });
      await again.waitForOutput(running, /still-2\r\n/);
      again.close();
    } finally {
      await second.gateway.close();
    }
  });
});
