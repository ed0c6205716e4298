import { describe, expect, it } from "vitest";
import { connectRunner } from "../../../gateway/runners/runner-client.js";
import { RunnerPool } from "../../../gateway/runners/runner-pool.js";
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
  it("places new terminals on the least loaded runner, records where each lives, and a new gateway adopts them from both", async () => {
    const { host } = await hostOn(runners.map((runner) => runner.server.url));
    for (let i = 0; i < 4; i++) await host.create({ uri: `ahp-terminal:/pool-${i}`, claim: { kind: "client", clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 });
    expect(runners.map((runner) => runner.registry.size)).toEqual([2, 2]);
    const placements = [0, 1, 2, 3].map((i) => host.linkAt(`ahp-terminal:/pool-${i}`)!.runner.url);
    expect(new Set(placements)).toEqual(new Set(runners.map((runner) => runner.server.url)));
    for (const [i, url] of placements.entries()) {
      const owner = runners.find((runner) => runner.server.url === url)!;
      expect(owner.registry.list({ "ahp.uri": `ahp-terminal:/pool-${i}` })).toHaveLength(1);
    }
    host.close();

    const { host: next, store, pool } = await hostOn(runners.map((runner) => runner.server.url));
    const adopted = await Promise.all(pool.list().map((runner) => next.adopt(runner)));
    expect(adopted).toEqual([2, 2]);
    expect(store.terminalRows().map((row) => row.resource).sort()).toEqual([0, 1, 2, 3].map((i) => `ahp-terminal:/pool-${i}`));
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
