import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { HAPROXY_SKIP_REASON, startHaproxy } from "../support/haproxy-balancer.js";
import { scratchHome } from "../support/scratch-home.js";
import { useStarted } from "../support/use-started.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { startServiceProcess, type ServiceProcess } from "./service-process.js";

const RUNNER_TOKEN = "balanced-runner-token";
const GATEWAY_TOKEN = "balanced-gateway-token";
/** Clients opened at a time: enough that both gateways get some. */
const CLIENTS = 4;
/** How long the surviving gateway's clients must stay connected after the other is killed. */
const STILL_OPEN_MS = 1_000;

/** A compiled gateway on the shared runner, with its metrics served. */
const startGateway = (runner: RunnerProcess, home: string): Promise<ServiceProcess> =>
  startServiceProcess("gateway/main.ts", ["--port", "0", "--runner", runner.url, "--metrics-port", "0", "--token", GATEWAY_TOKEN], { RUNNER_TOKEN, HOME: home }, { compiled: true });

/** The gateway's WebSocket connections open now, from its gateway_connections gauge. */
async function connectionsOf(gateway: ServiceProcess): Promise<number> {
  const metrics = gateway.stderrLines.map((line) => JSON.parse(line) as { metrics?: string }).find((entry) => entry.metrics)!.metrics!;
  return Number(/^gateway_connections (\d+)$/m.exec(await (await fetch(metrics)).text())![1]);
}

/** One compiled runner, two compiled gateways on it, and haproxy in front of both gateways. */
async function startBalancedGateways() {
  const home = scratchHome("balanced-home-");
  const runner = await startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN], { SHELL: "/bin/sh", HOME: home, ENV: "" }, { compiled: true });
  const gateways = [await startGateway(runner, home), await startGateway(runner, home)] as const;
  const backends = gateways.map((gateway, i) => ({ host: "127.0.0.1", port: Number(new URL(gateway.firstLine).port), name: `gateway-${i}` }));
  const balancer = await startHaproxy({ backends });
  const url = new URL(gateways[0].firstLine);
  url.port = String(balancer.port);
  return {
    gateways,
    balancer,
    url: url.href,
    async stop() {
      await balancer.stop();
      for (const gateway of gateways) await gateway.stop("SIGKILL");
      await runner.stop();
    },
  };
}

describe.skipIf(HAPROXY_SKIP_REASON)(`two gateways behind haproxy${HAPROXY_SKIP_REASON ? ` (${HAPROXY_SKIP_REASON})` : ""}`, () => {
  const system = useStarted("two gateways behind haproxy", startBalancedGateways, (started) => started.stop());

  it("spreads WebSockets over both gateways and, once one is killed, serves every new one from the other", async () => {
    const [first, second] = system.gateways;
    expect(await eventually(async () => Object.values(await system.balancer.serverStates()).every((state) => state === "UP"))).toBe(true);

    const before = await Promise.all(Array.from({ length: CLIENTS }, () => AhpTestClient.initialized(system.url)));
    const [onFirst, onSecond] = [await connectionsOf(first), await connectionsOf(second)];
    expect(onFirst + onSecond).toBe(CLIENTS);
    expect(Math.min(onFirst, onSecond)).toBeGreaterThan(0);

    await first.stop("SIGKILL");
    // Opened at once, before haproxy's checks need to have seen the kill: a refused connection goes to the other gateway.
    const after = await Promise.all(Array.from({ length: CLIENTS }, () => AhpTestClient.initialized(system.url)));
    for (const client of after) expect(await client.call("ping", {})).toBeDefined();
    expect(await connectionsOf(second)).toBe(onSecond + CLIENTS);
    // The killed gateway's clients lost their connection through haproxy; the others keep theirs.
    const closed = await Promise.all(before.map((client) => Promise.race([client.closed(), new Promise((done) => setTimeout(() => done("open"), STILL_OPEN_MS))])));
    expect(closed.filter((outcome) => outcome !== "open")).toHaveLength(onFirst);
    expect(await eventually(async () => (await system.balancer.serverStates())["gateway-0"]!.startsWith("DOWN"))).toBe(true);
    expect((await system.balancer.serverStates())["gateway-1"]).toBe("UP");

    for (const client of [...before, ...after]) client.close();
  });
});
