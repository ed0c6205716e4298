import type { SecureClientSessionOptions } from "node:http2";
import { createSecureContext } from "node:tls";
import { ConfigError } from "./cli.js";
import { readPemFile } from "./pem-file.js";

/** Files a client reaches a TLS server with: the CA to trust instead of the system's, and a certificate and key to present (mutual TLS). */
export interface ClientTlsFiles {
  ca?: string;
  cert?: string;
  key?: string;
}

/**
 * Node http2 connect options (connect-node's `nodeOptions`) for reaching a runner over TLS: `ca`
 * replaces the system's trusted roots (a private CA), `cert` and `key` (both or neither) are presented
 * to a runner that requires client certificates. Files are read and checked now; problems are ConfigErrors.
 */
export function http2ConnectOptionsFromTlsFiles(files: ClientTlsFiles): SecureClientSessionOptions {
  if ((files.cert === undefined) !== (files.key === undefined)) throw new ConfigError("a client certificate needs its key, and a key its certificate");
  const options: SecureClientSessionOptions = {};
  if (files.ca !== undefined) options.ca = readPemFile("the CA certificate to trust", files.ca);
  if (files.cert !== undefined && files.key !== undefined) {
    options.cert = readPemFile("the client certificate", files.cert);
    options.key = readPemFile("the client key", files.key);
  }
  try {
    createSecureContext(options);
  } catch (err) {
    throw new ConfigError(`client TLS files: ${(err as Error).message}`);
  }
  return options;
}
