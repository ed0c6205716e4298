import type { Logger } from "../../lib/logger.js";
import type { SocketLike } from "./connection-socket.js";

/** WebSocket close code for a client that did not initialize in time: it broke the endpoint's policy. */
export const CLOSE_POLICY_VIOLATION = 1008;
/** How long such a client gets to take the closing frame before the connection is dropped. */
const CLOSE_GRACE_MS = 1_000;

/** The part of a connection the deadline looks at and acts on. */
interface Handshaking {
  /** Undefined until `initialize` or `reconnect` succeeded. */
  readonly version: unknown;
  close(code: number, reason: string): void;
}

/**
 * Closes `connection` with 1008 unless `initialize` or `reconnect` has succeeded within
 * `timeoutMs` of the upgrade; `ping`, garbage or a failed handshake do not count, so a socket cannot
 * be held open with them. Returns the way to call the deadline off (the socket closed first).
 */
export function armInitializeDeadline(connection: Handshaking, socket: SocketLike, timeoutMs: number, log: Logger): () => void {
  const timer = setTimeout(() => {
    if (connection.version !== undefined) return;
    log.info({ timeoutMs }, "closed a WebSocket that sent no initialize or reconnect in time (--initialize-timeout-ms)");
    connection.close(CLOSE_POLICY_VIOLATION, `no initialize or reconnect within ${timeoutMs} ms`);
    // The closing frame may wait behind unread output, or a peer may never answer it.
    setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
  }, timeoutMs);
  timer.unref();
  return () => clearTimeout(timer);
}
