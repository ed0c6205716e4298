import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Code, ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../lib/cli.js";
import { http2ConnectOptionsFromTlsFiles, type ClientTlsFiles } from "../../../lib/tls-client-options.js";
import { tlsServerOptionsFromFiles } from "../../../lib/tls-server-options.js";
import { codeOf } from "../../support/connect-code.js";
import { useTestCertificates } from "../../support/test-certificates.js";
import { runToExit, useTestRunner, type TestRunner } from "./harness.js";

const execFileAsync = promisify(execFile);

const certs = useTestCertificates();
const tlsRunner = useTestRunner(() => ({ tls: tlsServerOptionsFromFiles({ cert: certs.serverCert, key: certs.serverKey }) }));
const mtlsRunner = useTestRunner(() => ({ tls: tlsServerOptionsFromFiles({ cert: certs.serverCert, key: certs.serverKey, clientCa: certs.caCert }) }));

/** A gRPC client (h2 over TLS) of `runner` that trusts and presents what `files` name. */
function grpcClient(runner: TestRunner, files: ClientTlsFiles) {
  const nodeOptions = http2ConnectOptionsFromTlsFiles(files);
  return runner.clientFor((baseUrl, interceptors) => createGrpcTransport({ baseUrl, interceptors, nodeOptions }));
}

/** The error a call failed with, or undefined when it succeeded. */
function failureOf(call: Promise<unknown>): Promise<ConnectError | undefined> {
  return call.then(
    () => undefined,
    (err: unknown) => ConnectError.from(err),
  );
}

/** curl with `args`, returning its exit code, the HTTP version and status it saw, and the body. */
async function curl(args: string[]): Promise<{ exitCode: number; version: string; status: number; body: string }> {
  try {
    const { stdout } = await execFileAsync("curl", ["-sS", "-w", "\n%{http_version} %{http_code}", ...args]);
    const [, body = "", version = "", status = ""] = /^([\s\S]*)\n([\d.]+) (\d+)$/.exec(stdout) ?? [];
    return { exitCode: 0, version, status: Number(status), body };
  } catch (err) {
    return { exitCode: (err as { code: number }).code, version: "", status: 0, body: (err as { stderr: string }).stderr };
  }
}

const listArgs = (runner: TestRunner): string[] => [
  "-H", "Content-Type: application/json",
  "-H", `Authorization: Bearer ${runner.token}`,
  "-d", "{}",
  `${runner.server.url}/terminal.v1.TerminalService/List`,
];

describe("the runner over TLS", () => {
  it("announces an https:// address", () => {
    expect(tlsRunner.server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it("serves the generated gRPC and Connect clients over h2 when they trust its CA", async () => {
    const client = grpcClient(tlsRunner, { ca: certs.caCert });
    const { terminal } = await client.spawn({ argv: ["echo", "over tls"] });
    expect((await runToExit(client, terminal!.id)).output.toString()).toBe("over tls\r\n");
    const nodeOptions = http2ConnectOptionsFromTlsFiles({ ca: certs.caCert });
    const connect = tlsRunner.clientFor((baseUrl, interceptors) => createConnectTransport({ baseUrl, interceptors, httpVersion: "2", nodeOptions }));
    expect((await connect.get({ id: terminal!.id })).terminal?.id).toBe(terminal!.id);
  });

  it("is refused by a client that does not trust its certificate", async () => {
    const error = await failureOf(grpcClient(tlsRunner, {}).list({}));
    expect(error?.rawMessage).toMatch(/unable to verify the first certificate|self-signed certificate/);
  });

  it("answers Connect JSON over HTTP/1.1 and over h2 to curl --cacert, as ALPN settles", async () => {
    const http1 = await curl(["--http1.1", "--cacert", certs.caCert, ...listArgs(tlsRunner)]);
    expect(http1).toMatchObject({ exitCode: 0, version: "1.1", status: 200 });
    expect(JSON.parse(http1.body)).toHaveProperty("terminals");
    const h2 = await curl(["--http2", "--cacert", certs.caCert, ...listArgs(tlsRunner)]);
    expect(h2).toMatchObject({ exitCode: 0, version: "2", status: 200 });
  });

  it("speaks no cleartext on its TLS port", async () => {
    const plain = await curl(["--http1.1", ...listArgs(tlsRunner).slice(0, -1), tlsRunner.server.url.replace("https:", "http:") + "/terminal.v1.TerminalService/List"]);
    expect(plain.status).not.toBe(200);
  });
});

/** A Spawn from a client with `files` fails, and no terminal came of it: the call never reached the service. */
async function expectRefusedSpawn(files: ClientTlsFiles): Promise<void> {
  const id = `refused-${Math.random().toString(36).slice(2)}`;
  const code = await codeOf(grpcClient(mtlsRunner, files).spawn({ id, argv: ["true"] }));
  expect(code).toBeDefined();
  expect(code).not.toBe(Code.Unauthenticated);
  const trusted = grpcClient(mtlsRunner, { ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey });
  expect(await codeOf(trusted.get({ id }))).toBe(Code.NotFound);
}

describe("the runner with --tls-client-ca (mutual TLS)", () => {
  it("accepts a client whose certificate its CA signed", async () => {
    const client = grpcClient(mtlsRunner, { ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey });
    expect(await codeOf(client.list({}))).toBeUndefined();
    const viaCurl = await curl(["--http1.1", "--cacert", certs.caCert, "--cert", certs.clientCert, "--key", certs.clientKey, ...listArgs(mtlsRunner)]);
    expect(viaCurl).toMatchObject({ exitCode: 0, status: 200 });
  });

  it("refuses at the handshake a client without a certificate", async () => {
    const error = await failureOf(grpcClient(mtlsRunner, { ca: certs.caCert }).list({}));
    expect(error?.rawMessage).toMatch(/alert certificate required/);
    await expectRefusedSpawn({ ca: certs.caCert });
    const viaCurl = await curl(["--http1.1", "--cacert", certs.caCert, ...listArgs(mtlsRunner)]);
    expect(viaCurl.exitCode).not.toBe(0);
    expect(viaCurl.status).toBe(0);
  });

  it("refuses a client whose certificate another CA signed", async () => {
    await expectRefusedSpawn({ ca: certs.caCert, cert: certs.strangerCert, key: certs.strangerKey });
    const viaCurl = await curl(["--http1.1", "--cacert", certs.caCert, "--cert", certs.strangerCert, "--key", certs.strangerKey, ...listArgs(mtlsRunner)]);
    expect(viaCurl.exitCode).not.toBe(0);
    expect(viaCurl.status).toBe(0);
  });

  it("still wants the bearer token from a client with a good certificate", async () => {
    const nodeOptions = http2ConnectOptionsFromTlsFiles({ ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey });
    const anonymous = mtlsRunner.clientFor((baseUrl) => createGrpcTransport({ baseUrl, nodeOptions }));
    expect(await codeOf(anonymous.list({}))).toBe(Code.Unauthenticated);
  });
});

describe("reading TLS files", () => {
  it("turns each kind of bad file into a ConfigError that names the flag and the file", () => {
    expect(() => tlsServerOptionsFromFiles({ cert: "/nonexistent.pem", key: certs.serverKey })).toThrow(ConfigError);
    expect(() => tlsServerOptionsFromFiles({ cert: "/nonexistent.pem", key: certs.serverKey })).toThrow(/^--tls-cert: cannot read "\/nonexistent.pem"/);
    expect(() => tlsServerOptionsFromFiles({ cert: certs.serverCert, key: `${certs.dir}/server.ext` })).toThrow(/--tls-key: ".*server.ext" is not a PEM file/);
    // A key that belongs to another certificate is caught now, not at the first handshake.
    expect(() => tlsServerOptionsFromFiles({ cert: certs.serverCert, key: certs.clientKey })).toThrow(/^--tls-key ".*client.key" is not the key of --tls-cert ".*server.crt"/);
    expect(() => tlsServerOptionsFromFiles({ cert: certs.serverCert, key: certs.serverKey, clientCa: "/nope" })).toThrow(/^--tls-client-ca: cannot read/);
  });

  it("asks for client certificates only with a client CA", () => {
    expect(tlsServerOptionsFromFiles({ cert: certs.serverCert, key: certs.serverKey })).not.toHaveProperty("requestCert");
    expect(tlsServerOptionsFromFiles({ cert: certs.serverCert, key: certs.serverKey, clientCa: certs.caCert })).toMatchObject({ requestCert: true, rejectUnauthorized: true });
  });

  it("gives clients options with only what they were given, and wants a certificate and its key together", () => {
    expect(Object.keys(http2ConnectOptionsFromTlsFiles({}))).toEqual([]);
    expect(Object.keys(http2ConnectOptionsFromTlsFiles({ ca: certs.caCert }))).toEqual(["ca"]);
    expect(Object.keys(http2ConnectOptionsFromTlsFiles({ ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey })).sort()).toEqual(["ca", "cert", "key"]);
    expect(() => http2ConnectOptionsFromTlsFiles({ cert: certs.clientCert })).toThrow(/^the client certificate needs the client key, and the key its certificate$/);
    expect(() => http2ConnectOptionsFromTlsFiles({ cert: certs.clientCert, key: certs.serverKey })).toThrow(/^the client key ".*server.key" is not the key of the client certificate ".*client.crt"/);
    expect(() => http2ConnectOptionsFromTlsFiles({ ca: "/nope" })).toThrow(/the CA certificate to trust: cannot read "\/nope"/);
  });
});

