import { ConfigError } from "./cli.js";

/** The flags that chose an address, as the person who started the process wrote them. */
export interface AddressFlags {
  /** The port's flag and value (`--port 7070`). */
  port: string;
  /** The host's flag and value (`--host 127.0.0.1`). */
  host: string;
}

/**
 * What to tell the person who chose the address when listening on it failed: a ConfigError
 * (exit code `cannotListen`) naming their flag, why, and what to do. Errors that did not come from
 * listening (or resolving the host to listen on) are returned as they are.
 */
export function listenFailure(flags: AddressFlags, err: unknown): unknown {
  const { code, syscall } = err as NodeJS.ErrnoException;
  if (syscall !== "listen" && syscall !== "getaddrinfo" && syscall !== "bind") return err;
  const fail = (message: string): ConfigError => new ConfigError(message, "cannotListen");
  switch (code) {
    case "EADDRINUSE":
      return fail(`${flags.port}: the port is already in use on ${hostOf(flags)}; stop what listens there, or choose another port (0 picks a free one)`);
    case "EACCES":
      return fail(`${flags.port}: this account may not listen on that port (below 1024 needs root or CAP_NET_BIND_SERVICE); choose one from 1024 up`);
    case "EADDRNOTAVAIL":
      return fail(`${flags.host}: not an address of this machine; give one of its addresses, or 0.0.0.0 for every one`);
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return fail(`${flags.host}: the name does not resolve (${code}); give an address or a name this machine knows`);
    default:
      return fail(`${flags.host} ${flags.port}: cannot listen (${code ?? (err as Error).message})`);
  }
}

function hostOf(flags: AddressFlags): string {
  return flags.host.replace(/^--[\w.-]+\s+/, "");
}

/** A `catch` handler that turns a failure to listen into the ConfigError listenFailure describes, and rethrows anything else. */
export function rethrowListenFailure(flags: AddressFlags): (err: unknown) => never {
  return (err) => {
    throw listenFailure(flags, err);
  };
}
