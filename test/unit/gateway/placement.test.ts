import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { placementOrder } from "../../../gateway/runners/placement.js";
import { RunnerPool } from "../../../gateway/runners/runner-pool.js";
import { StateStore } from "../../../gateway/state/store.js";
import { OpenTerminals } from "../../../gateway/terminals/open-terminals.js";
import { createLogger } from "../../../lib/logger.js";
import { createFakeRunner, type FakeRunner } from "../../support/fake-runner.js";

const log = createLogger("silent", "gateway");

async function hostOn(fakes: FakeRunner[]): Promise<OpenTerminals> {
  const byUrl = new Map(fakes.map((fake) => [fake.url, fake]));
  const pool = await RunnerPool.create([...byUrl.keys()], { connect: (url) => byUrl.get(url)!, log, resolve: async () => [] });
  return new OpenTerminals({ store: new StateStore(10_000), runners: pool, log, defaultDirectory: "/tmp" });
}

const request = (uri: string) => ({ uri, claim: { kind: "client" as const, clientId: "c" }, owner: "token-holder", cols: 80, rows: 24 });

describe("placing a terminal on several runners", () => {
  it("moves on to the next runner when one is full (RESOURCE_EXHAUSTED), and says why when every one is", async () => {
    const [full, roomy] = [createFakeRunner("http://full.invalid"), createFakeRunner("http://roomy.invalid")];
    full.refuseSpawns = Code.ResourceExhausted;
    const host = await hostOn([full, roomy]);
    const link = await host.create(request("ahp-terminal:/placed"));
    expect(link.runner.url).toBe(roomy.url);
    roomy.refuseSpawns = Code.ResourceExhausted;
    await expect(host.create(request("ahp-terminal:/nowhere"))).rejects.toThrow(/Cannot create the terminal: the fake runner refuses spawns/);
    host.close();
  });

  it("does not try another runner with a request the first refused as wrong", async () => {
    const fakes = [createFakeRunner("http://strict.invalid"), createFakeRunner("http://other.invalid")];
    const [strict, other] = placementOrder("ahp-terminal:/wrong", fakes) as FakeRunner[];
    strict!.refuseSpawns = Code.InvalidArgument;
    const host = await hostOn(fakes);
    await expect(host.create(request("ahp-terminal:/wrong"))).rejects.toMatchObject({ code: -32602 });
    expect(other!.byId.size).toBe(0);
    host.close();
  });
});
