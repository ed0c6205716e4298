import { describe, expect, it } from "vitest";
import { AhpTestClient, contentText, rpcErrorOf } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { HAPROXY_SKIP_REASON, startHaproxy } from "../support/haproxy-balancer.js";
import { scratchHome } from "../support/scratch-home.js";
import { useStarted } from "../support/use-started.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { startServiceProcess, type ServiceProcess } from "./service-process.js";

const RUNNER_TOKEN = "replica-runner-token";
const GATEWAY_TOKEN = "replica-gateway-token";

/** A compiled gateway over every runner, with its metrics served. */
const startGateway = (runners: RunnerProcess[], home: string): Promise<ServiceProcess> =>
  startServiceProcess("gateway/main.ts", ["--port", "0", ...runners.flatMap((runner) => ["--runner", runner.url]), "--metrics-port", "0", "--token", GATEWAY_TOKEN], { RUNNER_TOKEN, HOME: home }, { compiled: true });

/** A gateway's gauge, read from its /metrics. */
async function gaugeOf(gateway: ServiceProcess, name: string): Promise<number> {
  const metrics = gateway.stderrLines.map((line) => JSON.parse(line) as { metrics?: string }).find((entry) => entry.metrics)!.metrics!;
  return Number(new RegExp(`^${name} (\\d+)$`, "m").exec(await (await fetch(metrics)).text())![1]);
}

/** Two compiled runners, three compiled gateways over both, and haproxy in front of the gateways. */
async function startReplicas() {
  const home = scratchHome("replicas-home-");
  const runners = [0, 1].map(() => startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN], { SHELL: "/bin/sh", HOME: home, ENV: "" }, { compiled: true }));
  const started = await Promise.all(runners);
  const gateways = await Promise.all([0, 1, 2].map(() => startGateway(started, home)));
  const balancer = await startHaproxy({ backends: gateways.map((gateway, i) => ({ host: "127.0.0.1", port: Number(new URL(gateway.firstLine).port), name: `gateway-${i}` })) });
  const url = new URL(gateways[0]!.firstLine);
  url.port = String(balancer.port);
  return {
    runners: started,
    gateways,
    balancer,
    url: url.href,
    direct: (i: number) => gateways[i]!.firstLine,
    async stop() {
      await balancer.stop();
      for (const gateway of gateways) await gateway.stop("SIGKILL").catch(() => undefined);
      for (const runner of started) await runner.stop();
    },
  };
}

/** The numbers of the `line-N` lines in a text, in order. */
const lineNumbers = (text: string): number[] => [...text.matchAll(/line-(\d+)\r\n/g)].map((match) => Number(match[1]));

describe.skipIf(HAPROXY_SKIP_REASON)(`three gateways over two runners behind haproxy${HAPROXY_SKIP_REASON ? ` (${HAPROXY_SKIP_REASON})` : ""}`, () => {
  const system = useStarted("three gateways behind haproxy", startReplicas, (started) => started.stop());

  it("serve a terminal through any of them, and a client whose gateway is killed goes on through another with every line", async () => {
    expect(await eventually(async () => Object.values(await system.balancer.serverStates()).every((state) => state === "UP"), 10_000)).toBe(true);
    const uri = `ahp-terminal:/replicas-${process.pid}`;
    const creator = await AhpTestClient.initialized(system.direct(0));
    await creator.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "i=0; while :; do i=$((i+1)); echo line-$i; sleep 0.005; done"] } });

    // Through the balancer: the terminal is listed and served whichever gateway the client landed on. It asks for output offsets.
    const viewer = await AhpTestClient.connect(system.url);
    await viewer.call("initialize", { channel: "ahp-root://", protocolVersions: ["0.9.0"], clientId: "viewer", initialSubscriptions: ["ahp-root://"], _meta: { offsets: true } });
    const listed = await viewer.call("subscribe", { channel: "ahp-root://" });
    expect(listed.snapshot.state.terminals.map((row: { resource: string }) => row.resource)).toContain(uri);
    const { snapshot } = await viewer.call("subscribe", { channel: uri });
    await viewer.waitForOutput(uri, /line-\d+\r\n/);
    const counts = await Promise.all(system.gateways.map((gateway) => gaugeOf(gateway, "gateway_connections")));
    const served = counts.findIndex((count, i) => count === (i === 0 ? 2 : 1));
    expect(served).toBeGreaterThanOrEqual(0);
    // Only gateways someone reads the terminal through follow it.
    const followed = await Promise.all(system.gateways.map((gateway) => gaugeOf(gateway, "gateway_followed_terminals")));
    for (const [i, count] of followed.entries()) if (i !== served && i !== 0) expect(count).toBe(0);

    // The viewer's gateway dies; the viewer comes back through the balancer, on another gateway that never knew it.
    await system.gateways[served]!.stop("SIGKILL");
    await viewer.closed();
    const before = contentText(snapshot.state) + viewer.outputOf(uri);
    // Where the text the viewer shows ends, in the runner's bytes: the last output envelope's offset.
    const offsets = (viewer.frames as any[]).filter((frame) => frame.method === "action" && frame.params.channel === uri && frame.params._meta?.offset !== undefined);
    const shownUpTo: number = offsets.at(-1)?.params._meta.offset ?? snapshot._meta.offset;
    const back = await AhpTestClient.connect(system.url);
    expect((await rpcErrorOf(back.call("reconnect", { channel: "ahp-root://", clientId: "viewer", lastSeenServerSeq: viewer.lastSeenServerSeq, subscriptions: [uri] }))).code).toBe(-32008);
    await back.call("initialize", { channel: "ahp-root://", protocolVersions: ["0.9.0"], clientId: "viewer", initialSubscriptions: [], _meta: { offsets: true } });
    const { snapshot: again } = await back.call("subscribe", { channel: uri, _meta: { resumeFrom: { [uri]: shownUpTo } } });
    const after = contentText(again.state);
    // The byte-offset resume: exactly the text after what the viewer showed, up to where this snapshot ends.
    expect(again._meta.resume.from).toBe(shownUpTo);
    const resumed = before + again._meta.resume.data;
    expect(lineNumbers(resumed)).toEqual(lineNumbers(resumed).map((_, i) => i + 1));
    expect(after.endsWith(again._meta.resume.data)).toBe(true);
    // Every line the terminal wrote is there, in order, none missing: what the viewer had, and what came while it moved.
    const numbers = lineNumbers(after);
    expect(numbers[0]).toBe(1);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    expect(numbers.length).toBeGreaterThanOrEqual(lineNumbers(before).length);
    expect(after.startsWith(before.slice(0, before.lastIndexOf("\n") + 1))).toBe(true);
    // And it is live there: a rename through it reaches a client of another gateway.
    const survivor = [0, 1, 2].find((i) => i !== served && system.gateways[i]!.child.exitCode === null && system.gateways[i]!.child.signalCode === null)!;
    const other = await AhpTestClient.initialized(system.direct(survivor), { subscribe: ["ahp-root://"] });
    back.dispatch(uri, { type: "terminal/titleChanged", title: "moved" });
    await other.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes('"title":"moved"'), 5_000);
    await back.waitForOutput(uri, new RegExp(`line-${numbers.at(-1)! + 20}\\r\\n`));

    if (served !== 0) await creator.call("disposeTerminal", { channel: uri });
    else await other.call("disposeTerminal", { channel: uri });
    for (const client of [creator, back, other]) client.close();
  });
});
