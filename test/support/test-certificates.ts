import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useStarted } from "./use-started.js";

/** Paths of PEM files made for one test run: two unrelated CAs, a server certificate and client certificates. */
export interface TestCertificates {
  dir: string;
  /** The CA that signed the server certificate and `client`. */
  caCert: string;
  /** A server certificate for 127.0.0.1 and localhost, signed by the CA. */
  serverCert: string;
  serverKey: string;
  /** A client certificate signed by the CA. */
  clientCert: string;
  clientKey: string;
  /** A second CA, trusted by nobody, and a client certificate it signed. */
  otherCaCert: string;
  strangerCert: string;
  strangerKey: string;
  remove(): void;
}

/** Makes fresh certificates with openssl (P-256 keys, valid for a day) in a temporary directory. */
export function createTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), "runner-tls-"));
  const path = (name: string): string => join(dir, name);
  const openssl = (args: string[]): void => void execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const makeCa = (name: string): void =>
    openssl(["req", "-x509", ...newKey, "-keyout", `${name}.key`, "-out", `${name}.crt`, "-subj", `/CN=${name}`, "-days", "1",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
  const makeLeaf = (name: string, ca: string, extensions: string): void => {
    writeFileSync(path(`${name}.ext`), `${extensions}\n`);
    openssl(["req", "-new", ...newKey, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`]);
    openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-out", `${name}.crt`, "-days", "1", "-extfile", `${name}.ext`]);
  };
  makeCa("test-ca");
  makeCa("other-ca");
  makeLeaf("server", "test-ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth");
  makeLeaf("client", "test-ca", "extendedKeyUsage=clientAuth");
  makeLeaf("stranger", "other-ca", "extendedKeyUsage=clientAuth");
  return {
    dir,
    caCert: path("test-ca.crt"),
    serverCert: path("server.crt"),
    serverKey: path("server.key"),
    clientCert: path("client.crt"),
    clientKey: path("client.key"),
    otherCaCert: path("other-ca.crt"),
    strangerCert: path("stranger.crt"),
    strangerKey: path("stranger.key"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Fresh certificates for the tests around the call (the file, or the `describe` it is called in), removed after them. */
export function useTestCertificates(): TestCertificates {
  return useStarted("the test certificates", async () => createTestCertificates(), async (certs) => certs.remove());
}
