import { createSecureContext, type TlsOptions } from "node:tls";
import { ConfigError } from "./cli.js";
import { readCertificateFile, readPemFile } from "./pem-file.js";

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
    cert: readCertificateFile("--tls-cert", files.cert),
    key: readPemFile("--tls-key", files.key),
  };
  if (files.clientCa !== undefined) {
    options.ca = readCertificateFile("--tls-client-ca", files.clientCa);
    options.requestCert = true;
    options.rejectUnauthorized = true;
  }
  try {
    createSecureContext(options);
  } catch (err) {
    throw secureContextFailure(err, { cert: `--tls-cert "${files.cert}"`, key: `--tls-key "${files.key}"` });
  }
  return options;
}

/** The ConfigError for TLS files Node refused together: a key that is not its certificate's, or one that cannot be read. */
export function secureContextFailure(err: unknown, names: { cert: string; key: string }): ConfigError {
  const { code, message } = err as NodeJS.ErrnoException;
  if (code === "ERR_OSSL_X509_KEY_VALUES_MISMATCH") return new ConfigError(`${names.key} is not the key of ${names.cert}; give the key the certificate was made with`, "badCertificate");
  return new ConfigError(`${names.cert}, ${names.key}: ${message}; give a PEM certificate and its unencrypted PEM key`, "badCertificate");
}
