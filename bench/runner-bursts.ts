import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { createClient, ConnectError, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { TerminalService, WriteRequestSchema } from "../gen/terminal/v1/terminal_pb.js";
import { freePort } from "../lib/listen.js";
import { report, round, shellEnv, sleep, startService } from "./support.js";

/**
 * What one caller's burst costs every other caller of a runner: while a prober calls Health/Check on
 * a connection of its own every PROBE_INTERVAL_MS, (a) BURST_SPAWNS Spawns arrive at once on one
 * connection, (b) one message of MESSAGE_BYTES arrives, as Connect JSON, Connect binary and gRPC. For
 * each: the prober's longest wait, and the runner's own longest event-loop delay (from its metrics).
 * The Writes name no terminal, so what is measured is reading and parsing the message, not a pty.
 */
const BURST_SPAWNS = Number(process.env.BENCH_BURST_SPAWNS ?? 1100);
const MESSAGE_BYTES = Number(process.env.BENCH_MESSAGE_BYTES ?? 16 * 1024 * 1024 - 64);
/** How often the prober asks: often enough that a stall of a few ms shows. */
const PROBE_INTERVAL_MS = 2;
const TOKEN = "bench-runner-token";

const metricsPort = await freePort();
const runner = await startService("services/runner/main.ts", ["--port", "0", "--token", TOKEN, "--metrics-port", String(metricsPort), "--log-level", "warn"], shellEnv());
const auth: Interceptor = (next) => (request) => {
  request.header.set("authorization", `Bearer ${TOKEN}`);
  return next(request);
};
const grpc = createClient(TerminalService, createGrpcTransport({ baseUrl: runner.address, interceptors: [auth] }));

/** The runner's longest event-loop delay since the last call, in ms (prom-client resets it at every scrape). */
async function loopDelayMaxMs(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return Number(/^runner_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000;
}

/** Runs `work` while probing; returns the prober's longest wait and the runner's longest loop delay, in ms. */
async function probed<T>(work: () => Promise<T>): Promise<{ result: T; probeMaxMs: number; loopDelayMaxMs: number; elapsedMs: number }> {
  const health = createClient(Health, createGrpcTransport({ baseUrl: runner.address }));
  await health.check({});
  await loopDelayMaxMs();
  let probing = true;
  let probeMaxMs = 0;
  const prober = (async () => {
    while (probing) {
      const asked = performance.now();
      await health.check({});
      probeMaxMs = Math.max(probeMaxMs, performance.now() - asked);
      await sleep(PROBE_INTERVAL_MS);
    }
  })();
  const started = performance.now();
  const result = await work();
  const elapsedMs = performance.now() - started;
  await sleep(50);
  probing = false;
  await prober;
  return { result, probeMaxMs: round(probeMaxMs), loopDelayMaxMs: round(await loopDelayMaxMs()), elapsedMs: round(elapsedMs) };
}

async function spawnBurst(client: Client<typeof TerminalService>): Promise<Record<string, number>> {
  const outcomes: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: BURST_SPAWNS }, async () => {
      const code = await client.spawn({ command: "sleep 600" }).then(
        () => "ok",
        (err: unknown) => ConnectError.from(err).rawMessage.slice(0, 60),
      );
      outcomes[code] = (outcomes[code] ?? 0) + 1;
    }),
  );
  return outcomes;
}

/**
 * One Write of MESSAGE_BYTES to no terminal (the runner reads and parses all of it, then answers
 * NOT_FOUND), encoded beforehand for each protocol, so the bench process does nothing but send it
 * while it is measured. In JSON, bytes are base64: 3 bytes of data take 4 of the message.
 */
function messageBodies(): Array<[string, string, Buffer]> {
  const id = "no-such-terminal";
  const binary = Buffer.from(toBinary(WriteRequestSchema, create(WriteRequestSchema, { id, data: new Uint8Array(MESSAGE_BYTES).fill(0x61) })));
  const envelope = Buffer.alloc(5);
  envelope.writeUInt32BE(binary.length, 1);
  const json = Buffer.from(JSON.stringify({ id, data: Buffer.alloc(Math.floor((MESSAGE_BYTES * 3) / 4), 0x61).toString("base64") }));
  return [
    ["connectJson", "application/json", json],
    ["connectBinary", "application/proto", binary],
    ["grpc", "application/grpc", Buffer.concat([envelope, binary])],
  ];
}

/** Sends one Write body over a connection of its own; resolves with the gRPC status or HTTP status that came back. */
function post(contentType: string, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(runner.address, { maxSessionMemory: 512 });
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": "/terminal.v1.TerminalService/Write", "content-type": contentType, te: "trailers", authorization: `Bearer ${TOKEN}` });
    let status = "";
    stream.on("response", (headers) => (status = String(headers["grpc-status"] ?? headers[":status"])));
    stream.on("trailers", (trailers) => (status = String(trailers["grpc-status"] ?? status)));
    stream.resume();
    stream.on("close", () => {
      session.close();
      resolve(status);
    });
    stream.end(body);
  });
}

try {
  const spawns = await probed(() => spawnBurst(grpc));
  const { terminals } = await grpc.list({});
  await Promise.all(terminals.map((terminal) => grpc.close({ id: terminal.id, graceMs: 100 })));
  const messages: Record<string, unknown> = {};
  for (const [name, contentType, body] of messageBodies()) {
    await sleep(200);
    messages[name] = await probed(() => post(contentType, body));
  }
  report({
    benchmark: "runner-bursts",
    description: `a prober's longest Health/Check wait and the runner's longest event-loop delay (ms) while one caller sends ${BURST_SPAWNS} Spawns at once, or one ${MESSAGE_BYTES}-byte Write`,
    spawnBurst: spawns,
    message: messages,
  });
} finally {
  await runner.stop();
}
