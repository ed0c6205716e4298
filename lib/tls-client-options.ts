import type { SecureClientSessionOptions } from "node:http2";
import { createSecureContext } from "node:tls";
import { ConfigError } from "./cli.js";
import { readCertificateFile, readPemFile } from "./pem-file.js";
import { secureContextFailure } from "./tls-server-options.js";

/** Files a client reaches a TLS server with: the CA to trust instead of the system's, and a certificate and key to present (mutual TLS). */
export interface ClientTlsFiles {
  ca?: string;
  cert?: string;
  key?: string;
}

/** What each file is called in errors: the flags that named them, where there are flags. */
export type ClientTlsNames = Record<keyof ClientTlsFiles, string>;

const DEFAULT_NAMES: ClientTlsNames = { ca: "the CA certificate to trust", cert: "the client certificate", key: "the client key" };

/**
 * Node http2 connect options (connect-node's `nodeOptions`) for reaching a runner over TLS: `ca`
 * replaces the system's trusted roots (a private CA), `cert` and `key` (both or neither) are presented
 * to a runner that requires client certificates. Files are read and checked now; problems are
 * ConfigErrors naming each file as `names` says.
 */
export function http2ConnectOptionsFromTlsFiles(files: ClientTlsFiles, names: ClientTlsNames = DEFAULT_NAMES): SecureClientSessionOptions {
  if ((files.cert === undefined) !== (files.key === undefined)) throw new ConfigError(`${names.cert} needs ${names.key}, and the key its certificate`);
  const options: SecureClientSessionOptions = {};
  if (files.ca !== undefined) options.ca = readCertificateFile(names.ca, files.ca);
  if (files.cert !== undefined && files.key !== undefined) {
    options.cert = readCertificateFile(names.cert, files.cert);
    options.key = readPemFile(names.key, files.key);
  }
  try {
    createSecureContext(options);
  } catch (err) {
    throw secureContextFailure(err, { cert: `${names.cert} "${files.cert}"`, key: `${names.key} "${files.key}"` });
  }
  return options;
}
