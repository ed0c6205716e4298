import { describe, expect, it } from "vitest";
import { connectRunner } from "../../../gateway/runners/runner-client.js";
import { placementOrder } from "../../../gateway/runners/placement.js";
import { RunnerPool } from "../../../gateway/runners/runner-pool.js";
import { watchEveryRunner } from "../../../gateway/runners/watch-every-runner.js";
import { StateStore } from "../../../gateway/state/store.js";
import { OpenTerminals } from "../../../gateway/terminals/open-terminals.js";
import { createLogger } from "../../../lib/logger.js";
import { useTestRunner } from "../runner/harness.js";

const log = createLogger("silent", "gateway");
const runners = [0, 1].map(() => useTestRunner({ env: { ...process.env, SHELL: "/bin/sh", HOME: "/tmp" } }));

/** Both runners share one token here, as one Secret would give them in a deployment. */
async function hostOn(urls: string[]): Promise<{ host: OpenTerminals; store: StateStore; pool: RunnerPool }> {
  const token = runners[0]!.token;
  const pool = await RunnerPool.create(urls, { connect: (url) => connectRunner(url, token), log });
  const store = new StateStore(10_000);
  const host = new OpenTerminals({ store, runners: pool, log, defaultDirectory: "/tmp" });
  return { host, store, pool };
}

describe("a gateway with two runners", () => {
  it("places each terminal on the runner its URI ranks first, records where each lives, and a new gateway sees them on both", async () => {
    const { host, pool: first } = await hostOn(runners.map((runner) => runner.server.url));
    const uris = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `ahp-terminal:/pool-${i}`);
    for (const uri of uris) await host.create({ uri, claim: { kind: "client", clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 });
    const placements = uris.map((uri) => host.linkAt(uri)!.runner.url);
    expect(placements).toEqual(uris.map((uri) => placementOrder(uri, first.list())[0]!.url));
    expect(new Set(placements)).toEqual(new Set(runners.map((runner) => runner.server.url)));
    for (const [i, url] of placements.entries()) {
      const owner = runners.find((runner) => runner.server.url === url)!;
      expect(owner.registry.list({ "ahp.uri": uris[i]! })).toHaveLength(1);
    }
    // The same URI again, through a gateway that does not know it yet: the runner it ranks first refuses a second.
    const { host: other } = await hostOn(runners.map((runner) => runner.server.url));
    await expect(other.create({ uri: uris[0]!, claim: { kind: "client", clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 })).rejects.toMatchObject({ code: -32003 });
    other.close();
    host.close();

    const { host: next, store, pool } = await hostOn(runners.map((runner) => runner.server.url));
    const stop = new AbortController();
    await watchEveryRunner(next, pool, log, stop.signal);
    expect(store.terminalRows().map((row) => row.resource).sort()).toEqual([...uris].sort());
    stop.abort();
    next.close();
  });

  it("skips a runner that cannot be reached and is ready while one answers", async () => {
    const dead = "http://127.0.0.1:9";
    const { host } = await hostOn([dead, runners[0]!.server.url]);
    await host.create({ uri: "ahp-terminal:/pool-fallback", claim: { kind: "client", clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 });
    expect(host.linkAt("ahp-terminal:/pool-fallback")!.runner.url).toBe(runners[0]!.server.url);
    expect(await host.ready(1_000)).toBe(true);
    const { host: lonely } = await hostOn([dead]);
    expect(await lonely.ready(1_000)).toBe(false);
    await expect(lonely.create({ uri: "ahp-terminal:/nowhere", claim: { kind: "client", clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 })).rejects.toThrow(/the terminal runner is unavailable/);
    host.close();
    lonely.close();
  });

  it("turns a name that resolves to several addresses into one runner per address, and adds those that appear later", async () => {
    let answer = [{ address: "10.1.0.7", family: 4 }, { address: "fd00::8", family: 6 }];
    const pool = await RunnerPool.create(["http://runners.example:7070", "http://single.example:7070", "http://10.9.9.9:7070"], {
      connect: (url) => connectRunner(url, undefined),
      log,
      resolve: async (name) => (name === "runners.example" ? answer : [{ address: "10.2.0.1", family: 4 }]),
    });
    expect(pool.list().map((runner) => runner.url)).toEqual(["http://10.1.0.7:7070", "http://[fd00::8]:7070", "http://single.example:7070", "http://10.9.9.9:7070"]);
    const added: string[] = [];
    pool.onAdded((runner) => added.push(runner.url));
    answer = [...answer, { address: "10.1.0.9", family: 4 }];
    await pool.refresh();
    expect(added).toEqual(["http://10.1.0.9:7070"]);
  });

});
