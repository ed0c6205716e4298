import { afterAll, describe, expect, it } from "vitest";
import { AUTH_RESOURCE, tokenHolderAccess } from "../../../gateway/auth/access.js";
import { connectRunner } from "../../../gateway/runners/runner-client.js";
import { RunnerPool } from "../../../gateway/runners/runner-pool.js";
import { startGateway, type Gateway } from "../../../gateway/server.js";
import { DEFAULT_SOCKET_LIMITS, type SocketLimits } from "../../../gateway/wire/socket-limits.js";
import { createLogger } from "../../../lib/logger.js";
import { closedAfter, rawSocket } from "../../support/raw-http.js";
import { http2ConnectOptionsFromTlsFiles } from "../../../lib/tls-client-options.js";
import { tlsServerOptionsFromFiles } from "../../../lib/tls-server-options.js";
import { AhpTestClient, rpcErrorOf } from "../../support/ahp-test-client.js";
import { useTestCertificates } from "../../support/test-certificates.js";
import { useTestRunner } from "../runner/harness.js";

const log = createLogger("silent", "gateway");
const TOKEN = "tls-gateway-token";
const gateways: Gateway[] = [];

/** A gateway serving wss, in front of the mutual-TLS runner, presenting `client` (or nothing) to it. */
async function gatewayWith(client: { cert: string; key: string } | undefined, socketLimits?: SocketLimits): Promise<Gateway> {
  const runnerTls = http2ConnectOptionsFromTlsFiles({ ca: certs.caCert, ...client });
  const runners = await RunnerPool.create([runner.server.url], { connect: (url) => connectRunner(url, runner.token, runnerTls), log });
  const gateway = await startGateway({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    maxFrameBytes: 1024 * 1024,
    socketLimits,
    tls: tlsServerOptionsFromFiles({ cert: certs.serverCert, key: certs.serverKey }),
    access: tokenHolderAccess(TOKEN, AUTH_RESOURCE),
    runners,
    log,
    scrollbackChars: 100_000,
    defaultDirectory: "/tmp",
    shell: "/bin/sh",
    version: "test",
    console: false,
  });
  gateways.push(gateway);
  return gateway;
}

const certs = useTestCertificates();
const runner = useTestRunner(() => ({
  env: { ...process.env, SHELL: "/bin/sh", HOME: "/tmp", ENV: "", PS1: "$ " },
  tls: tlsServerOptionsFromFiles({ cert: certs.serverCert, key: certs.serverKey, clientCa: certs.caCert }),
}));
// Registered after the runner, so the gateways close before it does.
afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
});

describe("a gateway over TLS, in front of a runner that wants client certificates", () => {
  it("serves wss to clients that trust its CA, and runs terminals on the runner over mutual TLS", async () => {
    expect(runner.server.url).toMatch(/^https:/);
    const gateway = await gatewayWith({ cert: certs.clientCert, key: certs.clientKey });
    expect(gateway.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/\?tkn=/);
    const client = await AhpTestClient.initialized(gateway.url, { versions: ["0.9.0"], ca: certs.caCert });
    await client.call("createTerminal", { channel: "ahp-terminal:/tls" });
    await client.call("subscribe", { channel: "ahp-terminal:/tls" });
    client.dispatch("ahp-terminal:/tls", { type: "terminal/input", data: "echo over-$((40+2))\r" });
    await client.waitForOutput("ahp-terminal:/tls", /over-42\r\n/);
    client.close();
  });

  it("is refused by the runner without a client certificate, and refuses clients that do not trust it", async () => {
    const gateway = await gatewayWith(undefined);
    const client = await AhpTestClient.initialized(gateway.url, { versions: ["0.9.0"], ca: certs.caCert });
    expect((await rpcErrorOf(client.call("createTerminal", { channel: "ahp-terminal:/no-cert" }))).message).toMatch(/^Cannot create the terminal: the terminal runner is unavailable \(it wants a client certificate/);
    client.close();
    await expect(AhpTestClient.connect(gateway.url)).rejects.toThrow(/self-signed|unable to verify|certificate/i);
    await expect(AhpTestClient.connect(gateway.url.replace(/^wss:/, "ws:"))).rejects.toThrow();
  });

  it("refuses a connection past the limits with 503 over TLS, and closes one that never finishes its TLS handshake", async () => {
    const gateway = await gatewayWith(undefined, { ...DEFAULT_SOCKET_LIMITS, maxConnectionsPerAddress: 1, headersTimeoutMs: 300 });
    const first = await AhpTestClient.initialized(gateway.url, { ca: certs.caCert });
    await expect(AhpTestClient.connect(gateway.url, {}, certs.caCert)).rejects.toThrow("HTTP 503");
    expect(await first.call("ping")).toBeNull();
    first.close();
    const silent = await rawSocket(gateway.port, "127.0.0.2");
    silent.write("\x16\x03\x01");
    expect(await closedAfter(silent, 5_000)).toBeGreaterThan(150);
  });
});
