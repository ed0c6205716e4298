import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import type { BusyRun } from "../../../bench/measures/busy-terminals.js";
import { peerRows, type Measured } from "../../../bench/peers-rows.js";
import { BENCH_HOME } from "../../../bench/support.js";

// bench/support.ts makes a scratch HOME for bench shells when it is loaded; no shell runs here.
afterAll(() => rmSync(BENCH_HOME, { recursive: true, force: true }));

/** Echo times whose p50 and p99 are `p50` and `p99` (100 keys: 98 at p50, the two slowest at p99). */
const echoTimes = (p50: number, p99: number): number[] => [...Array<number>(98).fill(p50), p99, p99];

function measured(echo: Record<string, number[]>, spawn: Record<string, number[]> = {}, busy: Measured["busy"] = {}): Measured {
  return { flood: {}, busy, echo, echoPaced: {}, echoCpu: {}, ctrlC: {}, spawn };
}

/** One window of the many-terminals load: `serverMs` of CPU by the serving processes while 1 MB reached the clients. */
const busyRun = (terminals: number, serverMs: number): BusyRun => ({
  terminals,
  windowSeconds: 5,
  deliveredBytes: 1e6,
  cpu: { server: { server: serverMs }, clients: {} },
  producedLines: 250,
  missingChars: 0,
  unreported: 0,
});

describe("the peers bench's rows", () => {
  it("read a target against the lower bounds too: each one's figure over the same peer's, against the same bound", () => {
    const rows = peerRows(
      measured({ product: echoTimes(0.4, 0.8), sshd: echoTimes(0.2, 0.3), twoProcessFloor: echoTimes(0.25, 0.63), nodePty: echoTimes(0.1, 0.2) }),
      0,
    );
    expect(rows.echoP99Ms!.target).toEqual({
      vs: "sshd",
      ratio: 2.67,
      target: "<= 2",
      met: false,
      lowerBounds: { nodePty: { ratio: 0.67, target: "<= 2", met: true }, twoProcessFloor: { ratio: 2.1, target: "<= 2", met: false } },
    });
    expect(rows.echoP50Ms!.target).toMatchObject({ ratio: 2, met: true, lowerBounds: { nodePty: { ratio: 0.5, met: true }, twoProcessFloor: { ratio: 1.25, met: true } } });
  });

  it("leave the lower bounds out when none was measured, and say why a target was not read at all", () => {
    const rows = peerRows(measured({ product: echoTimes(0.4, 0.8), sshd: echoTimes(0.2, 0.5) }, { product: [17], nodePty: [5] }), 0);
    expect(rows.echoP99Ms!.target).toEqual({ vs: "sshd", ratio: 1.6, target: "<= 2", met: true });
    expect(rows.spawnP50Ms!.target).toEqual({ vs: "wetty", target: "<= 1", met: null, reason: "not measured: wetty" });
  });

  it("set the many-terminals target on 100 terminals, and report other counts with none", () => {
    const busy = { 100: { product: [busyRun(100, 45)], wetty: [busyRun(100, 24)] }, 20: { product: [busyRun(20, 104)], wetty: [busyRun(20, 31)] } };
    const rows = peerRows(measured({}, {}, busy), 0);
    expect(rows.busy100CpuMsPerDeliveredMB!.target).toEqual({ vs: "wetty", ratio: 1.88, target: "<= 2", met: true });
    expect(rows.busy20CpuMsPerDeliveredMB!.productTo).toEqual({ wetty: 3.35 });
    expect(rows.busy20CpuMsPerDeliveredMB!.target).toBeUndefined();
  });
});
