import { readFileSync } from "node:fs";
import http2 from "node:http2";
import { connect, type Socket } from "node:net";
import { Writable } from "node:stream";
import { connect as connectTls } from "node:tls";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { tlsServerOptionsFromFiles } from "../../../lib/tls-server-options.js";
import { eventually } from "../../support/eventually.js";
import { useTestCertificates } from "../../support/test-certificates.js";
import { startTestRunner, useTestRunner, type TestRunner } from "./harness.js";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
/** Short, so a test sees a connection that never finishes its start closed soon; calls take far less. */
const HANDSHAKE_TIMEOUT_MS = 300;

const opened: Array<{ close(): void }> = [];
afterEach(() => {
  for (const connection of opened.splice(0)) connection.close();
});

/** A logger whose JSON lines the test can read. */
function capturingLog(): { log: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: "warn" }, new Writable({ write: (chunk, _, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { log, lines };
}

/** A TCP connection to `runner` from `localAddress`; `closedByRunner` resolves when the runner closes it (the test never does before its end). */
async function rawConnection(runner: TestRunner, localAddress = "127.0.0.1"): Promise<{ socket: Socket; closedByRunner: Promise<void> }> {
  const { port } = new URL(runner.server.url);
  const socket = connect({ host: "127.0.0.1", port: Number(port), localAddress });
  socket.on("error", () => undefined);
  opened.push({ close: () => socket.destroy() });
  const closedByRunner = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  socket.resume();
  return { socket, closedByRunner };
}

/** An HTTP/2 session to `runner` from `localAddress`, once the runner's SETTINGS arrived (so the runner has taken the connection). */
async function session(runner: TestRunner, localAddress = "127.0.0.1"): Promise<http2.ClientHttp2Session> {
  const { port } = new URL(runner.server.url);
  const client = http2.connect(runner.server.url, { createConnection: () => connect({ host: "127.0.0.1", port: Number(port), localAddress }) });
  client.on("error", () => undefined);
  opened.push({ close: () => client.destroy() });
  await new Promise<void>((resolve, reject) => client.once("remoteSettings", () => resolve()).once("close", () => reject(new Error("closed before its SETTINGS"))));
  return client;
}

/** Calls List on `client`; resolves with the HTTP status. */
function list(client: http2.ClientHttp2Session, runner: TestRunner): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = client.request({ ":method": "POST", ":path": "/terminal.v1.TerminalService/List", "content-type": "application/json", authorization: `Bearer ${runner.token}` });
    let status = 0;
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("error", reject);
    stream.resume();
    stream.on("end", () => resolve(status));
    stream.end("{}");
  });
}

/** Whether `closed` settles within `ms`. */
const within = (closed: Promise<void>, ms: number): Promise<boolean> => Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

describe("connection limits", () => {
  it("closes a connection over --max-connections as it arrives, says so, and takes new ones once others close", async () => {
    const { log, lines } = capturingLog();
    const runner = await startTestRunner({ maxConnections: 3, log });
    try {
      const held = [await session(runner), await session(runner), await session(runner)];
      for (let i = 0; i < 3; i++) {
        const refused = await rawConnection(runner);
        expect(await within(refused.closedByRunner, 2_000)).toBe(true);
      }
      // Only the refusals: a runner in a test process may also say it closed descriptors the process inherited.
      const refusals = lines.filter((line) => /^connections refused/.test(String(line.msg)));
      expect(refusals).toMatchObject([{ level: 40, maxConnections: 3, connections: 3 }]);
      expect(await list(held[0]!, runner)).toBe(200);
      held[2]!.destroy();
      // The runner counts the closed one out when it sees it close: a new connection gets in from then on.
      const getsIn = (): Promise<boolean> => session(runner).then((client) => list(client, runner), () => 0).then((status) => status === 200);
      expect(await eventually(getsIn)).toBe(true);
    } finally {
      await runner.close();
    }
  });

  it("closes a connection over --max-connections-per-address, while other addresses still get in", async () => {
    const runner = await startTestRunner({ maxConnectionsPerAddress: 2 });
    try {
      await session(runner);
      await session(runner);
      const refused = await rawConnection(runner);
      expect(await within(refused.closedByRunner, 2_000)).toBe(true);
      expect(await list(await session(runner, "127.0.0.2"), runner)).toBe(200);
    } finally {
      await runner.close();
    }
  });
});

describe("the handshake timeout (cleartext)", () => {
  const runner = useTestRunner({ handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS });

  it("closes a connection that sends nothing", async () => {
    const { closedByRunner } = await rawConnection(runner);
    expect(await within(closedByRunner, 5_000)).toBe(true);
  });

  it("closes an HTTP/2 connection that sends its preface but never its SETTINGS", async () => {
    const { socket, closedByRunner } = await rawConnection(runner);
    socket.write(PREFACE);
    expect(await within(closedByRunner, 5_000)).toBe(true);
  });

  it("closes an HTTP/1.1 connection whose request headers never end", async () => {
    const { socket, closedByRunner } = await rawConnection(runner);
    socket.write("POST /terminal.v1.TerminalService/List HTTP/1.1\r\nHost: runner\r\n");
    expect(await within(closedByRunner, 5_000)).toBe(true);
  });

  it("leaves a connection that has started alone, however long between its calls", async () => {
    const client = await session(runner);
    for (let call = 0; call < 3; call++) {
      expect(await list(client, runner)).toBe(200);
      // Proves a non-event (the connection is not closed), so it can only be a pause.
      await new Promise((resolve) => setTimeout(resolve, HANDSHAKE_TIMEOUT_MS * 2));
    }
    expect(client.closed || client.destroyed).toBe(false);
  });
});

describe("the handshake timeout (TLS)", () => {
  const certs = useTestCertificates();
  const runner = useTestRunner(() => ({ handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS, tls: tlsServerOptionsFromFiles({ cert: certs.serverCert, key: certs.serverKey }) }));

  it("closes a connection that never starts its TLS handshake", async () => {
    const { closedByRunner } = await rawConnection(runner);
    expect(await within(closedByRunner, 5_000)).toBe(true);
  });

  for (const [protocol, start] of [
    ["h2", PREFACE],
    ["http/1.1", Buffer.from("POST /terminal.v1.TerminalService/List HTTP/1.1\r\nHost: runner\r\n")],
  ] as const) {
    it(`closes a ${protocol} connection over TLS that never finishes its start`, async () => {
      const { port } = new URL(runner.server.url);
      const socket = connectTls({ host: "127.0.0.1", port: Number(port), ca: readFileSync(certs.caCert), ALPNProtocols: [protocol] });
      socket.on("error", () => undefined);
      opened.push({ close: () => socket.destroy() });
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      await new Promise<void>((resolve) => socket.once("secureConnect", () => resolve()));
      expect(socket.alpnProtocol).toBe(protocol);
      socket.write(start);
      socket.resume();
      expect(await within(closed, 5_000)).toBe(true);
    });
  }
});
