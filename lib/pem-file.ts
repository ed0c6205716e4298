import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError } from "./cli.js";

/** The PEM file at `path` (certificates or a key), or a ConfigError naming `what` it was meant to be and why it cannot serve. */
export function readPemFile(what: string, path: string): Buffer {
  let contents: Buffer;
  try {
    contents = readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${what}: cannot read "${path}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); check the path and that this account may read it`, "unreadableFile");
  }
  if (!contents.includes("-----BEGIN ")) throw new ConfigError(`${what}: "${path}" is not a PEM file (no -----BEGIN line); give the PEM form (openssl x509 -outform PEM)`, "badCertificate");
  return contents;
}

/**
 * The PEM certificate (chain) at `path`, checked now: its first certificate must parse and be valid
 * today, so a broken or expired one stops the process at start rather than failing every handshake.
 */
export function readCertificateFile(what: string, path: string, now = Date.now()): Buffer {
  const contents = readPemFile(what, path);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(contents);
  } catch (err) {
    throw new ConfigError(`${what}: "${path}" holds no certificate that can be read (${(err as Error).message}); give a PEM certificate`, "badCertificate");
  }
  if (Date.parse(certificate.validTo) < now) throw new ConfigError(`${what}: the certificate in "${path}" expired on ${certificate.validTo}; give a current one`, "badCertificate");
  if (Date.parse(certificate.validFrom) > now) throw new ConfigError(`${what}: the certificate in "${path}" is valid only from ${certificate.validFrom}; check this machine's clock`, "badCertificate");
  return contents;
}
