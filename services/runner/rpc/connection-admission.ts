import { isIPv4 } from "node:net";
import type { Socket } from "node:net";
import type { Logger } from "../../../lib/logger.js";
import { RateLimitedLog } from "../../../lib/rate-limited-log.js";
import type { DescriptorLimit } from "../process/descriptor-limit.js";

/** How many connections the runner holds at once, in total and from one remote address. */
export interface ConnectionCounts {
  maxConnections: number;
  maxConnectionsPerAddress: number;
}

/**
 * Counts the runner's connections from the moment they are accepted until they close, and turns
 * away (closes at once) a connection over either limit, or one that would leave too few file
 * descriptors for terminals to start, so callers that open sockets and never use them cannot take
 * what the runner needs for its terminals. Refusals are logged as a warning at most once a minute.
 */
export class ConnectionAdmission {
  private total = 0;
  private readonly perAddress = new Map<string, number>();
  private readonly warnOverLimit: (fields?: Record<string, unknown>) => void;
  private readonly warnNoDescriptors: (fields?: Record<string, unknown>) => void;

  constructor(
    private readonly counts: ConnectionCounts,
    private readonly descriptors: DescriptorLimit,
    log: Logger,
  ) {
    this.warnOverLimit = new RateLimitedLog(log).warning("connections refused: the runner holds as many as it may (--max-connections, --max-connections-per-address)");
    this.warnNoDescriptors = new RateLimitedLog(log).warning("connections refused: the runner is nearly out of file descriptors; connections already open carry on");
  }

  /** Counts `socket` in and returns true, or closes it and returns false. */
  admit(socket: Socket): boolean {
    const address = addressOf(socket);
    const fromAddress = this.perAddress.get(address) ?? 0;
    if (socket.destroyed || this.total >= this.counts.maxConnections || fromAddress >= this.counts.maxConnectionsPerAddress) {
      if (!socket.destroyed) this.warnOverLimit({ address, connections: this.total, fromAddress, ...this.counts });
      socket.destroy();
      return false;
    }
    const room = this.descriptors.roomForConnection();
    if (room !== true) {
      this.warnNoDescriptors({ address, connections: this.total, ...room });
      socket.destroy();
      return false;
    }
    this.total++;
    this.perAddress.set(address, fromAddress + 1);
    socket.once("close", () => {
      this.total--;
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left === 0) this.perAddress.delete(address);
      else this.perAddress.set(address, left);
    });
    return true;
  }

  /** Connections held now. */
  get size(): number {
    return this.total;
  }
}

/** The remote address, an IPv4 client on a dual-stack socket counted as the IPv4 address it is. */
function addressOf(socket: Socket): string {
  const address = socket.remoteAddress ?? "";
  const mapped = address.startsWith("::ffff:") ? address.slice("::ffff:".length) : "";
  return isIPv4(mapped) ? mapped : address;
}
