import { createCtrlCProbe, ctrlCStats, repeatCtrlC, type CtrlCResult } from "./probes.js";
import { spawnRaw } from "./raw-pty.js";
import { BenchClient, percentile, report, shellEnv, sleep, startSystem } from "./support.js";
import { ctrlCStopVerdict, valueVerdict } from "./targets.js";

/**
 * ^C during a `yes` flood in `/bin/sh`: ms from sending \x03 until the prompt is back, and the
 * bytes that still arrived; through gateway and runner, and straight from node-pty in the bench's
 * own process (the baseline, measured in the same run by the same probe).
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
/** Time for the shell to print its first prompt. */
const SETTLE_MS = 300;
/** Bytes allowed to arrive after ^C (p50), from the issue. */
const BYTES_AFTER_P50 = 32 * 1024;

async function rawNodePty(): Promise<CtrlCResult[]> {
  const shell = spawnRaw("/bin/sh", [], shellEnv());
  await sleep(SETTLE_MS);
  const results = await repeatCtrlC(createCtrlCProbe((text) => shell.write(text), (listener) => shell.onData(listener)), RUNS);
  shell.kill();
  return results;
}

async function throughGateway(): Promise<CtrlCResult[]> {
  const system = await startSystem();
  try {
    const client = await BenchClient.connect(system.gateway.address);
    const uri = "ahp-terminal:/flood";
    await client.openTerminal(uri);
    await sleep(SETTLE_MS);
    const probe = createCtrlCProbe(
      (text) => client.input(uri, text),
      (listener) => client.onData(uri, listener),
    );
    const results = await repeatCtrlC(probe, RUNS);
    client.close();
    return results;
  } finally {
    await system.stop();
  }
}

const raw = await rawNodePty();
const gateway = await throughGateway();
report({
  benchmark: "ctrl-c-under-flood",
  description: `yes in /bin/sh; ^C sent once 4 MiB of the flood arrived; ${RUNS} runs each, through gateway and runner and from node-pty in the bench's process (same run, same probe)`,
  nodePtyRaw: ctrlCStats(raw),
  gateway: ctrlCStats(gateway),
  ratios: {
    stopP50: ctrlCStopVerdict(gateway.map((r) => r.stopMs), raw.map((r) => r.stopMs)),
    bytesAfterP50: valueVerdict(percentile(gateway.map((r) => r.charsAfter), 50), "<=", BYTES_AFTER_P50),
  },
});
