import { describe, expect, it } from "vitest";
import type { ActionEnvelope } from "../../../ahp/types.js";
import { featuresOf } from "../../../ahp/versions.js";
import { Channels, type Pace, type Peer } from "../../../gateway/state/channels.js";

/** A subscriber whose pace the test sets. */
class PacedPeer implements Peer {
  readonly features = featuresOf("1.1.0");
  pace: Pace = "ready";
  constructor(readonly clientId: string) {}
  sendFrame(): void {}
  deliver(_envelope: ActionEnvelope): void {}
  sendEnvelope(): void {}
  paceFor(): Pace {
    return this.pace;
  }
  accessRefusal(): undefined {
    return undefined;
  }
  lists(): boolean {
    return true;
  }
  messageLimit(): undefined {
    return undefined;
  }
  released(): void {}
}

const settled = async (promise: Promise<void>): Promise<boolean> => {
  let done = false;
  void promise.then(() => (done = true));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
};

describe("waiting for room on a channel", () => {
  it("resolves at once while a subscriber has room, or nobody sets the pace", async () => {
    const channels = new Channels();
    expect(await settled(channels.waitForRoom("c"))).toBe(true);
    const [fast, slow] = [new PacedPeer("fast"), new PacedPeer("slow")];
    slow.pace = "busy";
    channels.subscribe("c", slow);
    channels.subscribe("c", fast);
    expect(await settled(channels.waitForRoom("c"))).toBe(true);
    fast.pace = "detached";
    expect(await settled(channels.waitForRoom("c"))).toBe(false);
    slow.pace = "detached";
    expect(await settled(channels.waitForRoom("c"))).toBe(true);
  });

  it("wakes when a busy subscriber says its room changed, when it leaves, or when the wait is aborted, and not before", async () => {
    const channels = new Channels();
    const peer = new PacedPeer("p");
    peer.pace = "busy";
    channels.subscribe("c", peer);
    const waiting = channels.waitForRoom("c");
    channels.roomChanged(peer);
    expect(await settled(waiting)).toBe(false);
    peer.pace = "ready";
    channels.roomChanged(peer, "other");
    expect(await settled(waiting)).toBe(false);
    channels.roomChanged(peer, "c");
    expect(await settled(waiting)).toBe(true);

    peer.pace = "busy";
    const untilLeft = channels.waitForRoom("c");
    expect(await settled(untilLeft)).toBe(false);
    channels.unsubscribe("c", peer);
    expect(await settled(untilLeft)).toBe(true);

    channels.subscribe("c", peer);
    const stop = new AbortController();
    const aborted = channels.waitForRoom("c", stop.signal);
    expect(await settled(aborted)).toBe(false);
    stop.abort();
    expect(await settled(aborted)).toBe(true);
    const dropped = channels.waitForRoom("c");
    channels.drop("c");
    expect(await settled(dropped)).toBe(true);
  });
});
