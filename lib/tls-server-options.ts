import { createSecureContext, type TlsOptions } from "node:tls";
import { ConfigError } from "./cli.js";
import { readPemFile } from "./pem-file.js";

/** The files a TLS server is configured with: its certificate chain and key, and optionally the CA its clients' certificates must be signed by. */
export interface ServerTlsFiles {
  cert: string;
  key: string;
  clientCa?: string;
}

/**
 * Node TLS server options from the files behind `--tls-cert`, `--tls-key` and `--tls-client-ca`, read
 * and checked now (a key that does not match its certificate is a ConfigError, not a failed handshake
 * later). With a client CA, every client must present a certificate signed by it, or the handshake fails.
 */
export function tlsServerOptionsFromFiles(files: ServerTlsFiles): TlsOptions {
  const options: TlsOptions = {
    cert: readPemFile("--tls-cert", files.cert),
    key: readPemFile("--tls-key", files.key),
  };
  if (files.clientCa !== undefined) {
    options.ca = readPemFile("--tls-client-ca", files.clientCa);
    options.requestCert = true;
    options.rejectUnauthorized = true;
  }
  try {
    createSecureContext(options);
  } catch (err) {
    throw new ConfigError(`--tls-cert, --tls-key, --tls-client-ca: ${(err as Error).message}`);
  }
  return options;
}
