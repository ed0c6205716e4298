/** How long a socket may take at each step, and how many may be open: what keeps idle and piled-up sockets from starving the gateway. */
export interface SocketLimits {
  /** A request's headers (plain or upgrade, the TLS handshake included) must be complete this long after the connection was accepted. */
  headersTimeoutMs: number;
  /** After the upgrade, `initialize` or `reconnect` must have been handled within this. */
  initializeTimeoutMs: number;
  /** How often each WebSocket is pinged. */
  pingIntervalMs: number;
  /** A peer that sends nothing at all for this long after a ping reached its socket is dropped. */
  pongTimeoutMs: number;
  /** Connections (WebSocket and plain HTTP) open at once; one more is answered 503. */
  maxConnections: number;
  /** Connections open at once from one remote address. */
  maxConnectionsPerAddress: number;
}

/** The defaults `--headers-timeout-ms` and the other socket flags start from. */
export const DEFAULT_SOCKET_LIMITS: SocketLimits = {
  // A request's headers follow the connection at once; 5 s is many round trips of a slow link, TLS included.
  headersTimeoutMs: 5_000,
  // Every client sends initialize right after the upgrade; 10 s allows for a slow link and a busy gateway.
  initializeTimeoutMs: 10_000,
  // Below the 60 s idle timeout of common load balancers, so a quiet connection is kept open through them too.
  pingIntervalMs: 30_000,
  // A live peer answers within a round trip; 30 s rides out a laptop's Wi-Fi handover or a stalled tab.
  pongTimeoutMs: 30_000,
  // Far above the clients of any team, far below the descriptors a default container gets.
  maxConnections: 1_024,
  // A person's tabs, editors and scripts, or an office behind one NAT address.
  maxConnectionsPerAddress: 128,
};
