import WebSocket from "ws";
import { report, round, rssOf, sleep, startService } from "./support.js";

/**
 * Four connections each send one frame of the largest size accepted at the same moment, while a
 * fifth pings: the gateway's RSS before, at its peak and after, and how long the pings waited.
 * BENCH_FRAME_BYTES sets the frame size (default: the gateway's default --max-frame-bytes, 4 MiB);
 * BENCH_FRAME=paste sends one long string (a legitimate paste) instead of tiny objects.
 */
const FRAME_BYTES = Number(process.env.BENCH_FRAME_BYTES ?? 4 * 1024 * 1024);
const PASTE = process.env.BENCH_FRAME === "paste";
const SENDERS = 4;
/** When RSS is read again after the burst: V8 gives memory back when it sees the process idle, some seconds later. */
const AFTER_S = [1, 5, 15, 30];

const gateway = await startService("gateway/main.ts", ["--port", "0", "--no-runner", "--log-level", "warn", "--max-frame-bytes", String(FRAME_BYTES)], { GATEWAY_TOKEN: "bench" });
const open = (): Promise<WebSocket> =>
  new Promise((done, fail) => {
    const ws = new WebSocket(gateway.address);
    ws.once("open", () => done(ws));
    ws.once("error", fail);
  });
try {
  const pid = gateway.child.pid!;
  const frame = PASTE ? pasteFrame(FRAME_BYTES) : tinyObjectsFrame(FRAME_BYTES);
  const probe = await open();
  // The probe stays for the whole run, longer than a connection may go without initializing.
  probe.send(JSON.stringify({ jsonrpc: "2.0", id: "init", method: "initialize", params: { channel: "ahp-root://", protocolVersions: ["1.1.0"], clientId: "frame-burst" } }));
  let pings = 0;
  const pingMs = async (): Promise<number> => {
    const id = `p${++pings}`;
    const sent = performance.now();
    probe.send(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }));
    await new Promise<void>((done) => {
      const onMessage = (data: Buffer): void => {
        if (!data.toString().includes(`"${id}"`)) return;
        probe.off("message", onMessage);
        done();
      };
      probe.on("message", onMessage);
    });
    return performance.now() - sent;
  };
  await sleep(1000);
  const before = rssOf(pid);
  const senders = await Promise.all(Array.from({ length: SENDERS }, open));
  let peak = before;
  let worstPing = 0;
  let watching = true;
  const watchers = [
    (async () => {
      for (; watching; await sleep(10)) peak = Math.max(peak, rssOf(pid));
    })(),
    (async () => {
      for (; watching; await sleep(10)) worstPing = Math.max(worstPing, await pingMs());
    })(),
  ];
  const started = performance.now();
  const answers = await Promise.all(
    senders.map(
      (ws) =>
        new Promise<string>((done) => {
          ws.once("message", (data: Buffer) => done((JSON.parse(data.toString()) as { error?: { message: string } }).error?.message ?? "answered"));
          ws.once("close", (code) => done(`closed ${code}`));
          ws.send(frame);
        }),
    ),
  );
  const answeredMs = performance.now() - started;
  const after: Record<string, number> = {};
  for (const seconds of AFTER_S) {
    await sleep(Math.max(0, started + answeredMs + seconds * 1000 - performance.now()));
    after[`${seconds}s`] = round(rssOf(pid) / 2 ** 20, 0);
  }
  watching = false;
  await Promise.all(watchers);
  for (const ws of [probe, ...senders]) ws.terminate();
  report({
    bench: "frame-burst",
    frameBytes: Buffer.byteLength(frame),
    frame: PASTE ? "paste" : "tiny objects",
    senders: SENDERS,
    rssBeforeMiB: round(before / 2 ** 20, 0),
    rssPeakMiB: round(peak / 2 ** 20, 0),
    rssAfterMiB: after,
    answeredMs: round(answeredMs, 0),
    worstPingMs: round(worstPing, 0),
    answers: [...new Set(answers)],
  });
} finally {
  await gateway.stop();
}

/** A ping whose params are an array of as many empty objects as fit in `bytes`. */
function tinyObjectsFrame(bytes: number): string {
  const head = '{"jsonrpc":"2.0","id":1,"method":"ping","params":[';
  return `${head}${"{},".repeat(Math.floor((bytes - head.length - 4) / 3))}{}]}`;
}

/** A ping carrying one string of pasted lines that fills `bytes`. */
function pasteFrame(bytes: number): string {
  const line = "echo some pasted text\n";
  return JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { data: line.repeat(Math.floor((bytes - 100) / (line.length + 1))) } });
}
