import type { SocketLimits } from "./socket-limits.js";

/** What liveness needs of a WebSocket and the socket under it. */
export interface PingablePeer {
  /** Sends a ping; `flushed` runs once the operating system has taken it (everything queued before it, too). */
  ping(flushed: () => void): void;
  /** Bytes of ours the operating system has taken so far: it grows while the peer reads. */
  readonly bytesTaken: number;
  /** Drops the connection without a closing handshake. */
  terminate(): void;
}

/**
 * Pings a WebSocket every `pingIntervalMs` and drops it when its peer is gone. A pong is a control
 * frame, and it queues behind data both ways: our ping waits behind output the peer is still
 * reading, the peer's pong behind frames it is still sending. So a peer is alive when anything at
 * all arrived from it since the ping was sent, or while it keeps reading: the operating system took
 * more of our bytes (its window opened) or the ping itself within the last `pongTimeoutMs`. Only a
 * peer that neither sends nor reads for `pongTimeoutMs` is dropped; a busy connection never is.
 */
export class PeerLiveness {
  private heardAt: number;
  /** When the ping waiting for an answer was sent; undefined when none waits. */
  private pingedAt: number | undefined;
  /** The last time the peer was seen reading: our bytes or the ping taken by the operating system. */
  private readAt = 0;
  private taken = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly peer: PingablePeer,
    private readonly limits: Pick<SocketLimits, "pingIntervalMs" | "pongTimeoutMs">,
    private readonly dead: (silentMs: number) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.heardAt = now();
    this.schedule(limits.pingIntervalMs);
  }

  /** Something arrived from the peer. */
  heard(): void {
    this.heardAt = this.now();
  }

  /** Stops pinging (the connection closed). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Runs every interval, and at a waiting ping's deadline: judges the ping that waits, then sends the next. */
  private tick(): void {
    const now = this.now();
    const { pingIntervalMs, pongTimeoutMs } = this.limits;
    if (this.pingedAt !== undefined) {
      if (this.heardAt < this.pingedAt) {
        const taken = this.peer.bytesTaken;
        if (taken > this.taken) {
          this.taken = taken;
          this.readAt = now;
        }
        const left = this.readAt + pongTimeoutMs - now;
        if (left > 0) return this.schedule(Math.min(left, pingIntervalMs));
        this.stop();
        this.dead(now - this.heardAt);
        return this.peer.terminate();
      }
      const pingedAt = this.pingedAt;
      this.pingedAt = undefined;
      if (pingedAt + pingIntervalMs > now) return this.schedule(pingedAt + pingIntervalMs - now);
    }
    this.ping(now);
    this.schedule(Math.min(pingIntervalMs, pongTimeoutMs));
  }

  private ping(now: number): void {
    this.pingedAt = now;
    this.readAt = now;
    this.taken = this.peer.bytesTaken;
    this.peer.ping(() => {
      if (this.pingedAt === now) this.readAt = Math.max(this.readAt, this.now());
    });
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), delayMs);
    this.timer.unref();
  }
}
