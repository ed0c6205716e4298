import { BenchClient, cpuSecondsOf, descendantsOf, report, round, rssOf, runnerClient, sleep, startSystem } from "./support.js";

/** Many terminals at once, each writing about 40 KB/s (Coder's scale-test load), all subscribed through one gateway. */
const TERMINALS = Number(process.env.BENCH_SCALE_TERMINALS ?? 500);
const SECONDS = Number(process.env.BENCH_SCALE_SECONDS ?? 30);
// bash builtins only (no process per line): 4,000 characters, then a 0.1 s read timeout on the idle input.
const PRODUCER = "while :; do printf '%04000d\\n' 0; read -rt 0.1 _; done\r";

// The gateway's per-connection and per-user terminal limits (64 and 256 by default) are for people; this bench is one user with TERMINALS.
const limits = ["--max-terminals-per-connection", String(TERMINALS), "--max-terminals-per-user", String(TERMINALS)];
const system = await startSystem({ shell: "/bin/bash", runnerArgs: ["--retain-total-bytes", String(2 * 1024 ** 3)], gatewayArgs: limits });
try {
  const runnerPid = system.runner.child.pid!;
  const gatewayPid = system.gateway.child.pid!;
  const before = rssOf(runnerPid) + rssOf(gatewayPid);
  const clients = await Promise.all(Array.from({ length: 4 }, () => BenchClient.connect(system.gateway.address)));
  const received = new Map<string, number>();
  for (const client of clients) {
    client.onAction = (envelope) => {
      if (envelope.action.type === "terminal/data") received.set(envelope.channel, (received.get(envelope.channel) ?? 0) + envelope.action.data.length);
    };
  }
  const uris = Array.from({ length: TERMINALS }, (_, i) => `ahp-terminal:/scale-${i}`);
  const spawnStarted = performance.now();
  for (const [i, uri] of uris.entries()) {
    const client = clients[i % clients.length]!;
    await client.openTerminal(uri);
  }
  const spawnSeconds = (performance.now() - spawnStarted) / 1000;
  await sleep(2_000);
  const shells = descendantsOf(runnerPid).reduce((sum, pid) => sum + rssOf(pid), 0);
  const idle = rssOf(runnerPid) + rssOf(gatewayPid);
  const cpuBefore = { runner: cpuSecondsOf(runnerPid), gateway: cpuSecondsOf(gatewayPid) };
  const runner = runnerClient(system.runner.address);
  const producedSoFar = async (): Promise<number> => (await runner.list({})).terminals.reduce((sum, info) => sum + Number(info.endOffset), 0);
  const producedBefore = await producedSoFar();
  const receivedBefore = [...received.values()].reduce((a, b) => a + b, 0);
  for (const [i, uri] of uris.entries()) clients[i % clients.length]!.input(uri, PRODUCER);
  const started = performance.now();
  let peakBusy = 0;
  const peak = { runner: 0, gateway: 0 };
  while (performance.now() - started < SECONDS * 1000) {
    await sleep(1_000);
    const now = { runner: rssOf(runnerPid), gateway: rssOf(gatewayPid) };
    peakBusy = Math.max(peakBusy, now.runner + now.gateway);
    peak.runner = Math.max(peak.runner, now.runner);
    peak.gateway = Math.max(peak.gateway, now.gateway);
    if (process.env.BENCH_VERBOSE) {
      const deliveredNow = [...received.values()].reduce((a, b) => a + b, 0) - receivedBefore;
      const asked = performance.now();
      const producedNow = (await producedSoFar()) - producedBefore;
      process.stderr.write(`${Math.round((performance.now() - started) / 1000)} s: List took ${round(performance.now() - asked)} ms, produced ${round(producedNow / 1e6)} MB, delivered ${round(deliveredNow / 1e6)} MB, gateway ${round(cpuSecondsOf(gatewayPid) - cpuBefore.gateway)} cpu-s, client ${round(process.cpuUsage().user / 1e6)} cpu-s\n`);
    }
  }
  const elapsed = (performance.now() - started) / 1000;
  for (const [i, uri] of uris.entries()) clients[i % clients.length]!.input(uri, "\u0003");
  await sleep(2_000);
  const produced = (await producedSoFar()) - producedBefore;
  const retained = (await runner.list({})).terminals.reduce((sum, info) => sum + Number(info.endOffset - info.startOffset), 0);
  const cpu = { runner: cpuSecondsOf(runnerPid) - cpuBefore.runner, gateway: cpuSecondsOf(gatewayPid) - cpuBefore.gateway };
  const delivered = [...received.values()].reduce((a, b) => a + b, 0) - receivedBefore;
  // Output counts bytes at the runner, characters at the client: the producers print ASCII only, so they agree.
  const silent = uris.filter((uri) => (received.get(uri) ?? 0) < 1000).length;
  report({
    benchmark: "scale",
    description: `${TERMINALS} bash terminals, each printing 4,000 characters every 0.1 s (about 40 KB/s) for ${SECONDS} s, subscribed through one gateway by 4 clients`,
    terminals: TERMINALS,
    spawnSeconds: round(spawnSeconds),
    producedMBPerSecond: round(produced / 1e6 / elapsed),
    deliveredShareOfProduced: round(delivered / produced, 4),
    offeredMBPerSecond: round((TERMINALS * 40_000) / 1e6),
    terminalsThatDeliveredNothing: silent,
    cpuCoresUsed: { runner: round(cpu.runner / elapsed), gateway: round(cpu.gateway / elapsed) },
    cpuMsPerDeliveredMB: { runner: round((cpu.runner * 1000) / (delivered / 1e6)), gateway: round((cpu.gateway * 1000) / (delivered / 1e6)) },
    everyTerminalDelivered: { terminalsSilent: silent, target: "== 0", met: silent === 0 },
    rssPerTerminalKiB: {
      idle: Math.round((idle - before) / TERMINALS / 1024),
      busy: Math.round((peakBusy - before) / TERMINALS / 1024),
    },
    // What the busy figure holds: the runner's record of each terminal's output (up to --retain-bytes) and the gateway's scrollback.
    retainedKiBPerTerminal: Math.round(retained / TERMINALS / 1024),
    peakRssMiB: { runner: Math.round(peak.runner / 2 ** 20), gateway: Math.round(peak.gateway / 2 ** 20) },
    shellsRssMiB: Math.round(shells / 2 ** 20),
    targets: { idleRssPerTerminalKiB: 512, busyRssPerTerminalKiB: 2048 },
  });
  for (const client of clients) client.close();
} finally {
  await system.stop();
}
