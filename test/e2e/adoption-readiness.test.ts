import { describe, expect, it } from "vitest";
import { AhpTestClient, contentText } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { useRestartableGateway } from "./gateway-restarts.js";

/** Terminals with content, as in the report of empty snapshots after a gateway restart. */
const TERMINALS = 20;
/** Gateway kills in a row (the empty snapshots showed in 2 of 9). */
const KILLS = 3;
const uris = Array.from({ length: TERMINALS }, (_, i) => `ahp-terminal:/ready-${i}`);
const marker = (i: number) => `done-${i + 100}`;

const services = useRestartableGateway();

describe("a restarted gateway answers for adopted terminals only once their state is rebuilt", () => {
  it(`never gives an empty snapshot of a terminal with content: ${TERMINALS} terminals, ${KILLS} kills`, async () => {
    const client = await AhpTestClient.initialized(services.url, { versions: ["0.9.0"] });
    for (const [i, uri] of uris.entries()) {
      await client.call("createTerminal", { channel: uri });
      client.dispatch(uri, { type: "terminal/input", data: `seq 1 20000; echo ${marker(i)}\r` });
    }
    for (const [i, uri] of uris.entries()) {
      const text = async () => contentText((await client.call("subscribe", { channel: uri })).snapshot.state);
      expect(await eventually(async () => (await text()).includes(`\r\n${marker(i)}\r\n`), 60_000)).toBe(true);
    }
    client.close();

    for (let kill = 1; kill <= KILLS; kill++) {
      await services.restart();
      // Asked the moment the new gateway prints its address: no polling, no grace period.
      const fresh = await AhpTestClient.connect(services.url);
      const { snapshots } = await fresh.call("initialize", {
        channel: "ahp-root://",
        protocolVersions: ["1.1.0"],
        clientId: `after-kill-${kill}`,
        initialSubscriptions: ["ahp-root://", ...uris],
      });
      expect(snapshots.map((snapshot: { resource: string }) => snapshot.resource)).toEqual(["ahp-root://", ...uris]);
      for (const [i, snapshot] of snapshots.slice(1).entries()) {
        const text = contentText(snapshot.state);
        expect(text, `kill ${kill}, ${uris[i]}`).toContain(`\r\n20000\r\n${marker(i)}\r\n`);
      }
      const { snapshot: again } = await fresh.call("subscribe", { channel: uris[0] });
      expect(contentText(again.state)).toContain(marker(0));
      fresh.close();
    }
  }, 180_000);
});
