import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { http2ConnectOptionsFromTlsFiles } from "../../lib/tls-client-options.js";
import { useTestCertificates } from "../support/test-certificates.js";
import { runRunnerToExit, startRunnerProcess } from "./runner-process.js";

const certs = useTestCertificates();

describe("the runner process with TLS flags", () => {
  it("serves mutual TLS at the https:// address it prints, and logs how it is secured", async () => {
    const runner = await startRunnerProcess(
      ["--port", "0", "--tls-cert", certs.serverCert, "--tls-key", certs.serverKey, "--tls-client-ca", certs.caCert],
      { RUNNER_TOKEN: "tls-token" },
    );
    try {
      expect(runner.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const nodeOptions = http2ConnectOptionsFromTlsFiles({ ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey });
      const client = createClient(TerminalService, createGrpcTransport({ baseUrl: runner.url, nodeOptions }));
      await expect(client.list({}, { headers: { authorization: "Bearer tls-token" } })).resolves.toHaveProperty("terminals");
      const listening = runner.stderrLines.map((line) => JSON.parse(line) as { msg: string }).find((entry) => entry.msg === "runner listening");
      expect(listening).toMatchObject({ url: runner.url, auth: true, tls: true, clientCertificates: true, openReflection: false });
    } finally {
      await runner.stop();
    }
  });

  it("refuses to start on a TLS file it cannot use, in one line naming the flag, with the exit code of the cause", async () => {
    const missing = await runRunnerToExit(["--port", "0", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", certs.serverKey]);
    expect(missing).toMatchObject({ code: 3, stderr: expect.stringMatching(/^runner: --tls-cert: cannot read "\/nonexistent\/cert.pem" \(ENOENT\); check the path[^\n]*\n$/) });
    const mismatched = await runRunnerToExit(["--port", "0", "--tls-cert", certs.serverCert, "--tls-key", certs.clientKey]);
    expect(mismatched).toMatchObject({ code: 4, stderr: expect.stringMatching(/^runner: --tls-key "[^"]+client.key" is not the key of --tls-cert "[^"]+server.crt"; give the key the certificate was made with\n$/) });
    const half = await runRunnerToExit(["--port", "0", "--tls-key", certs.serverKey]);
    expect(half).toMatchObject({ code: 2, stderr: "runner: --tls-cert and --tls-key go together (--help lists the flags)\n" });
  });
});
