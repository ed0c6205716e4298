import { PerformanceObserver } from "node:perf_hooks";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * A process of its own that runs the gateway's state store alone, for gateway-state-cost.ts. From the
 * compiled build at `argv[2]`, it opens `argv[3]` terminals with a scrollback of `argv[4]` characters,
 * each with one subscriber that counts the frames it is handed, and commits `argv[5]` MB of output
 * round-robin in chunks of 4,002 characters (the busy terminals' lines, a fresh string each, as the
 * gateway's decoder makes them). It prints one JSON line: CPU and collector ms per MB, and peak RSS.
 */
const [dist, terminals, scrollbackChars, megabytes] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5])];
/** Characters of each chunk: a busy terminal's line, 4,000 characters and \r\n. */
const CHUNK_CHARS = 4_002;
/** Chunks committed between two turns of the event loop, so the collector's observer and timers run. */
const CHUNKS_PER_TURN = 200;

/** What this uses of the build's state store (gateway/state/store.ts), loaded as the gateway loads it: from the build, not the sources. */
interface StateStore {
  openTerminal(uri: string, initial: object): void;
  readonly channels: { subscribe(uri: string, peer: object): void };
  commit(uri: string, action: { type: "terminal/data"; data: string }, options: { outputOffset: number }): unknown;
}
const { StateStore } = (await import(pathToFileURL(join(dist, "gateway", "state", "store.js")).href)) as { StateStore: new (scrollbackChars: number) => StateStore };

let framed = 0;
const peer = {
  clientId: "bench",
  features: {},
  sendFrame: () => {},
  deliver: (_envelope: unknown, frame: string) => void (framed += frame.length),
  sendEnvelope: () => {},
  paceFor: () => "ready",
  accessRefusal: () => undefined,
  lists: () => true,
  messageLimit: () => undefined,
  released: () => {},
};
const store = new StateStore(scrollbackChars);
const uris = Array.from({ length: terminals }, (_, i) => `ahp-terminal:/bench/${i}`);
for (const uri of uris) {
  store.openTerminal(uri, { title: "bash", content: [], claim: { kind: "client", clientId: "bench" }, lifecycle: { status: "running" } });
  store.channels.subscribe(uri, peer);
}

let collectorMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collectorMs += entry.duration;
}).observe({ entryTypes: ["gc"] });
let peakRss = 0;
const line = Buffer.alloc(CHUNK_CHARS, "0");
line.write("\r\n", CHUNK_CHARS - 2, "latin1");
const chunks = Math.round((megabytes * 1e6) / CHUNK_CHARS);
const offsets = new Array<number>(terminals).fill(0);
const cpuBefore = process.cpuUsage();
for (let i = 0; i < chunks; i++) {
  line.write(String(i).padStart(6, "0"), 0, "latin1");
  const terminal = i % terminals;
  const outputOffset = offsets[terminal]! + CHUNK_CHARS;
  offsets[terminal] = outputOffset;
  store.commit(uris[terminal]!, { type: "terminal/data", data: line.toString("latin1", 0, CHUNK_CHARS) }, { outputOffset });
  if (i % CHUNKS_PER_TURN === 0) {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    await new Promise((next) => setImmediate(next));
  }
}
const cpu = process.cpuUsage(cpuBefore);
// The observer hears of the last collections on a later turn.
await new Promise((next) => setTimeout(next, 50));
const mb = (chunks * CHUNK_CHARS) / 1e6;
if (framed < chunks * CHUNK_CHARS) throw new Error(`the subscriber was handed ${framed} characters of frames for ${chunks * CHUNK_CHARS} of output`);
process.stdout.write(`${JSON.stringify({ cpuMsPerMB: (cpu.user + cpu.system) / 1000 / mb, collectorMsPerMB: collectorMs / mb, peakRssMiB: peakRss / 2 ** 20 })}\n`);
process.exit(0);
