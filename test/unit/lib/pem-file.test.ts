import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../lib/cli.js";
import { readCertificateFile } from "../../../lib/pem-file.js";
import { useTestCertificates } from "../../support/test-certificates.js";

const certs = useTestCertificates();
const DAY_MS = 24 * 60 * 60 * 1000;

/** The ConfigError `read` throws, as kind and message. */
function refusal(read: () => unknown): { kind: string; message: string } {
  try {
    read();
  } catch (err) {
    if (err instanceof ConfigError) return { kind: err.kind, message: err.message };
    throw err;
  }
  throw new Error("nothing was refused");
}

describe("readCertificateFile", () => {
  it("reads a current certificate", () => {
    expect(readCertificateFile("--tls-cert", certs.serverCert).toString()).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it("refuses an expired or not yet valid certificate, saying when", () => {
    expect(refusal(() => readCertificateFile("--tls-cert", certs.serverCert, Date.now() + 3 * DAY_MS))).toEqual({
      kind: "badCertificate",
      message: expect.stringMatching(/^--tls-cert: the certificate in ".*server.crt" expired on .* GMT; give a current one$/),
    });
    expect(refusal(() => readCertificateFile("--tls-cert", certs.serverCert, Date.now() - 3 * DAY_MS)).message).toMatch(/is valid only from .*; check this machine's clock/);
  });

  it("tells an unreadable file from one that holds no certificate", () => {
    expect(refusal(() => readCertificateFile("--tls-client-ca", join(certs.dir, "absent.crt")))).toMatchObject({ kind: "unreadableFile", message: expect.stringContaining("(ENOENT)") });
    expect(refusal(() => readCertificateFile("--tls-client-ca", certs.serverKey))).toMatchObject({ kind: "badCertificate", message: expect.stringContaining("holds no certificate that can be read") });
    const plain = join(certs.dir, "plain.txt");
    writeFileSync(plain, "hello");
    expect(refusal(() => readCertificateFile("--tls-cert", plain))).toMatchObject({ kind: "badCertificate", message: expect.stringContaining("is not a PEM file") });
  });
});
