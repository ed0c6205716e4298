import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PeerLiveness, type PingablePeer } from "../../../gateway/wire/peer-liveness.js";

const LIMITS = { pingIntervalMs: 1_000, pongTimeoutMs: 3_000 };

/** A peer whose pings, reading and termination the test drives. */
function fakePeer(): PingablePeer & { pings: number; flushes: Array<() => void>; terminated: number; taken: number } {
  return {
    pings: 0,
    flushes: [],
    terminated: 0,
    taken: 0,
    ping(flushed) {
      this.pings++;
      this.flushes.push(flushed);
    },
    get bytesTaken() {
      return this.taken;
    },
    terminate() {
      this.terminated++;
    },
  };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("PeerLiveness", () => {
  it("pings every interval and keeps a peer that answers", () => {
    const peer = fakePeer();
    const liveness = new PeerLiveness(peer, LIMITS, () => {});
    // The pong comes 10 ms after each ping.
    for (let elapsed = 0, answered = 0; elapsed < 60_000; elapsed += 10) {
      vi.advanceTimersByTime(10);
      if (peer.pings > answered) {
        answered = peer.pings;
        peer.flushes.at(-1)!();
        liveness.heard();
      }
    }
    expect(peer.pings).toBe(60_000 / LIMITS.pingIntervalMs);
    expect(peer.terminated).toBe(0);
    liveness.stop();
  });

  it("drops a peer that neither sends nor reads for the pong timeout after a ping, once, and pings no more", () => {
    const peer = fakePeer();
    const dead = vi.fn();
    new PeerLiveness(peer, LIMITS, dead);
    vi.advanceTimersByTime(LIMITS.pingIntervalMs);
    peer.flushes[0]!();
    vi.advanceTimersByTime(LIMITS.pongTimeoutMs - 1);
    expect(peer.terminated).toBe(0);
    vi.advanceTimersByTime(1);
    expect(peer.terminated).toBe(1);
    expect(dead).toHaveBeenCalledWith(LIMITS.pingIntervalMs + LIMITS.pongTimeoutMs);
    vi.advanceTimersByTime(60_000);
    expect(peer.pings).toBe(1);
    expect(peer.terminated).toBe(1);
  });

  it("keeps a peer whose pongs wait behind its own frames: anything it sends counts", () => {
    const peer = fakePeer();
    const liveness = new PeerLiveness(peer, LIMITS, () => {});
    for (let elapsed = 0; elapsed < 30_000; elapsed += 500) {
      vi.advanceTimersByTime(500);
      for (const flush of peer.flushes.splice(0)) flush();
      liveness.heard();
    }
    expect(peer.pings).toBeGreaterThan(5);
    expect(peer.terminated).toBe(0);
    liveness.stop();
  });

  it("keeps a slow reader whose ping waits behind output, while it keeps taking output; drops it once it stops", () => {
    const peer = fakePeer();
    new PeerLiveness(peer, LIMITS, () => {});
    // The ping is never flushed: it sits behind output the peer reads a little at a time.
    for (let elapsed = 0; elapsed < 30_000; elapsed += 1_000) {
      vi.advanceTimersByTime(1_000);
      peer.taken += 64 * 1024;
    }
    expect(peer.terminated).toBe(0);
    vi.advanceTimersByTime(2 * LIMITS.pongTimeoutMs);
    expect(peer.terminated).toBe(1);
  });

  it("counts the pong timeout from the moment the ping left the queue, not from when it was sent", () => {
    const peer = fakePeer();
    new PeerLiveness(peer, LIMITS, () => {});
    vi.advanceTimersByTime(LIMITS.pingIntervalMs + 2_500);
    peer.taken += 1;
    peer.flushes[0]!();
    vi.advanceTimersByTime(LIMITS.pongTimeoutMs - 100);
    expect(peer.terminated).toBe(0);
    vi.advanceTimersByTime(LIMITS.pongTimeoutMs);
    expect(peer.terminated).toBe(1);
  });
});
