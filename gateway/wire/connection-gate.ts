import type { Socket } from "node:net";
import type { Logger } from "../../lib/logger.js";
import { DESCRIPTOR_RESERVE, socketsLeftByDescriptors } from "./descriptor-budget.js";
import { RateLimitedLog } from "../../lib/rate-limited-log.js";
import type { SocketLimits } from "./socket-limits.js";

/**
 * Refused sockets that may stay open at once to read their 503 (half the descriptor reserve): past
 * it, a burst of refusals would itself exhaust the descriptors, so further ones are closed as soon
 * as the answer is written.
 */
const MAX_LINGERING_REFUSALS = DESCRIPTOR_RESERVE / 2;

/** One connection, from its acceptance until its request's headers arrived. */
interface Entry {
  socket: Socket;
  address: string;
  /** Why it is refused; undefined when it was admitted. */
  refusal: string | undefined;
  deadline: NodeJS.Timeout | undefined;
}

/**
 * Every connection the gateway accepted, WebSocket or plain HTTP alike: how many are open, in total
 * and per remote address, against their limits (the total lowered to what the open-file limit
 * leaves, so new sockets are refused while descriptors remain to say so); and each one's deadline
 * for the headers of its request, after which it is closed. A refused connection does not count.
 */
export class ConnectionGate {
  private open = 0;
  /** Refused sockets not yet closed. */
  private refusedOpen = 0;
  private readonly perAddress = new Map<string, number>();
  /** Keyed by the peer's address and port, which a TLS socket shares with the TCP socket under it. */
  private readonly entries = new Map<string, Entry>();
  private readonly warnings: RateLimitedLog;
  /** The total in force: `maxConnections`, or less when the open-file limit leaves fewer descriptors. */
  readonly maxConnections: number;

  constructor(
    private readonly limits: Pick<SocketLimits, "headersTimeoutMs" | "maxConnections" | "maxConnectionsPerAddress">,
    private readonly log: Logger,
    descriptorsLeft: number | undefined = socketsLeftByDescriptors(),
  ) {
    this.warnings = new RateLimitedLog(log);
    this.maxConnections = Math.min(limits.maxConnections, descriptorsLeft ?? Infinity);
    if (this.maxConnections < limits.maxConnections) {
      log.warn({ maxConnections: this.maxConnections, asked: limits.maxConnections }, "the open-file limit leaves descriptors for fewer connections than --max-connections: raise it (ulimit -n) to allow more");
    }
  }

  /** Counts a freshly accepted socket and arms its headers deadline; returns why it is refused, or undefined. */
  admit(socket: Socket): string | undefined {
    // Reset before it was taken: nothing to count or answer.
    if (socket.remoteAddress === undefined) {
      socket.destroy();
      return "the connection is gone";
    }
    const address = addressOf(socket);
    const fromAddress = this.perAddress.get(address) ?? 0;
    let refusal: string | undefined;
    if (this.open >= this.maxConnections) {
      refusal = `the gateway has ${this.open} connections open, its limit`;
      this.warnings.warn("total", { address, open: this.open, limit: this.maxConnections }, "refused a connection: too many open (--max-connections, or the open-file limit)");
    } else if (fromAddress >= this.limits.maxConnectionsPerAddress) {
      refusal = `your address has ${fromAddress} connections open, the limit for one address`;
      this.warnings.warn("per-address", { address, open: fromAddress, limit: this.limits.maxConnectionsPerAddress }, "refused a connection: too many open from one address (--max-connections-per-address)");
    }
    const key = endpointOf(socket);
    const entry: Entry = { socket, address, refusal, deadline: undefined };
    entry.deadline = setTimeout(() => {
      this.log.debug({ address }, "closed a connection whose request did not arrive in time (--headers-timeout-ms)");
      socket.destroy();
    }, this.limits.headersTimeoutMs);
    this.entries.set(key, entry);
    if (refusal) this.refusedOpen++;
    else {
      this.open++;
      this.perAddress.set(address, fromAddress + 1);
    }
    socket.once("close", () => {
      clearTimeout(entry.deadline);
      if (this.entries.get(key) === entry) this.entries.delete(key);
      if (refusal) return void this.refusedOpen--;
      this.open--;
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
    });
    return refusal;
  }

  /** Whether a socket just refused may stay open to read its answer, or must be closed once it is written. */
  refusedMayLinger(): boolean {
    return this.refusedOpen <= MAX_LINGERING_REFUSALS;
  }

  /** The headers of a request arrived on `socket` (or the TLS socket over it): its deadline is off; returns why it is refused, or undefined. */
  headersArrived(socket: Socket): string | undefined {
    const entry = this.entries.get(endpointOf(socket));
    if (!entry) return undefined;
    clearTimeout(entry.deadline);
    entry.deadline = undefined;
    return entry.refusal;
  }

  /** Closes every connection still waiting for its request (the gateway is shutting down). */
  destroyWaiting(): void {
    for (const entry of this.entries.values()) if (entry.deadline) entry.socket.destroy();
  }
}

/** The peer's address, an IPv4-mapped IPv6 address as the IPv4 address it is. */
function addressOf(socket: Socket): string {
  return (socket.remoteAddress ?? "unknown").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
}

function endpointOf(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}
