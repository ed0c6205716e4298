import { BenchClient, percentile, report, round, rssOf, sleep, startSystem } from "./support.js";

/** `yes` for 30 s with a WebSocket client that never reads: memory of runner and gateway, and whether everyone else is fine. */
const SECONDS = Number(process.env.BENCH_STALLED_SECONDS ?? 30);
/**
 * Pause between the other client's keys. At 100 ms a 30 s run timed about 290 keys, so its p99 was
 * the third-slowest key and moved by half between runs of one build; at 20 ms it rests on ~1,100.
 */
const KEY_INTERVAL_MS = 20;

const system = await startSystem();
try {
  const runnerPid = system.runner.child.pid!;
  const gatewayPid = system.gateway.child.pid!;
  const stalled = await BenchClient.connect(system.gateway.address);
  const uri = "ahp-terminal:/stalled";
  await stalled.openTerminal(uri);
  (stalled.socket as unknown as { _socket: { pause(): void } })._socket.pause();
  const other = await BenchClient.connect(system.gateway.address);
  const quiet = "ahp-terminal:/other";
  await other.openTerminal(quiet);
  other.input(quiet, "exec cat\r");
  const driver = await BenchClient.connect(system.gateway.address);
  driver.input(uri, "yes\r");
  let peak = { runner: 0, gateway: 0 };
  const echo: number[] = [];
  let waiting: (() => void) | undefined;
  other.onData(quiet, () => waiting?.());
  const started = performance.now();
  while (performance.now() - started < SECONDS * 1000) {
    peak = { runner: Math.max(peak.runner, rssOf(runnerPid)), gateway: Math.max(peak.gateway, rssOf(gatewayPid)) };
    const sent = performance.now();
    await new Promise<void>((done) => {
      waiting = done;
      other.input(quiet, "x");
    });
    echo.push(performance.now() - sent);
    await sleep(KEY_INTERVAL_MS);
  }
  // Still killable: ^C from another connection ends the flood.
  const stopped = performance.now();
  driver.input(uri, "\u0003");
  const root = await driver.call("subscribe", { channel: "ahp-root://" });
  void root;
  report({
    benchmark: "stalled-client",
    description: `yes for ${SECONDS} s watched by a WebSocket client that never reads; another client types into another terminal meanwhile`,
    peakRssMiB: { runner: Math.round(peak.runner / 2 ** 20), gateway: Math.round(peak.gateway / 2 ** 20) },
    otherClientEchoMs: { p50: round(percentile(echo, 50)), p90: round(percentile(echo, 90)), p99: round(percentile(echo, 99)), samples: echo.length },
    ctrlCAcceptedAfterMs: round(performance.now() - stopped),
    targets: { peakRssMiB: 256 },
  });
  for (const client of [stalled, other, driver]) client.close();
} finally {
  await system.stop();
}
