import { isVersionSensitive, shapeEnvelope } from "../../ahp/shaping.js";
import type { ActionEnvelope, Uri } from "../../ahp/types.js";
import type { VersionFeatures } from "../../ahp/versions.js";
import type { Grant } from "../auth/grants.js";
import { notificationFrame } from "../wire/json-rpc.js";

/** A handshaken connection as the host sees it: how to shape for it, send to it, and what it may do. */
export interface Peer {
  readonly clientId: string;
  readonly features: VersionFeatures;
  /** Bytes sent to this connection that it has not taken yet. */
  readonly buffered: number;
  sendFrame(frame: string): void;
  /** Sends an action envelope (its shared frame), batching output when the connection asked for it or falls behind. */
  deliver(envelope: ActionEnvelope, frame: string): void;
  /** Why this connection may not use `grant` (or act signed in, when undefined); undefined when it may. */
  accessRefusal(grant: Grant | undefined): string | undefined;
}

/** Unsent bytes under which a subscriber has room for more output. */
const ROOM_BYTES = 1024 * 1024;
/** How often a congested channel looks again for a subscriber with room. */
const ROOM_POLL_MS = 5;

/** Who is subscribed to which channel; sends each envelope to every subscriber in the shape its version reads. */
export class Channels {
  private readonly subscribers = new Map<Uri, Set<Peer>>();

  /** Adds a subscription (subscribing twice is one subscription). */
  subscribe(channel: Uri, peer: Peer): void {
    let peers = this.subscribers.get(channel);
    if (!peers) this.subscribers.set(channel, (peers = new Set()));
    peers.add(peer);
  }

  /** Removes one subscription. */
  unsubscribe(channel: Uri, peer: Peer): void {
    const peers = this.subscribers.get(channel);
    peers?.delete(peer);
    if (peers?.size === 0) this.subscribers.delete(channel);
  }

  /** Removes every subscription of a peer (its socket closed). */
  unsubscribeAll(peer: Peer): void {
    for (const channel of [...this.subscribers.keys()]) this.unsubscribe(channel, peer);
  }

  /** Forgets a channel (its terminal was disposed): nothing more is sent on it. */
  drop(channel: Uri): void {
    this.subscribers.delete(channel);
  }

  /**
   * Resolves once a subscriber of the channel has room for more (or nobody is subscribed): output is
   * taken from the runner at the pace of the fastest subscriber, so a flood waits in the runner and the
   * process rather than in the gateway.
   */
  async waitForRoom(channel: Uri): Promise<void> {
    for (;;) {
      const peers = this.subscribers.get(channel);
      if (!peers || peers.size === 0) return;
      for (const peer of peers) if (peer.buffered < ROOM_BYTES) return;
      await new Promise((resolve) => setTimeout(resolve, ROOM_POLL_MS));
    }
  }

  /** How many connections are subscribed to the channel. */
  subscriberCount(channel: Uri): number {
    return this.subscribers.get(channel)?.size ?? 0;
  }

  /** True when the peer is subscribed to the channel. */
  isSubscribed(channel: Uri, peer: Peer): boolean {
    return this.subscribers.get(channel)?.has(peer) ?? false;
  }

  /** Sends an envelope to every subscriber of its channel, and to `alsoTo` (the dispatcher of an accepted action). */
  broadcast(envelope: ActionEnvelope, alsoTo?: Peer): void {
    const peers = new Set(this.subscribers.get(envelope.channel));
    if (alsoTo) peers.add(alsoTo);
    if (peers.size === 0) return;
    if (!isVersionSensitive(envelope.action)) {
      const frame = notificationFrame("action", envelope);
      for (const peer of peers) peer.deliver(envelope, frame);
      return;
    }
    const frames = new Map<string, string>();
    for (const peer of peers) {
      const key = JSON.stringify(peer.features);
      let frame = frames.get(key);
      if (frame === undefined) frames.set(key, (frame = notificationFrame("action", shapeEnvelope(envelope, peer.features))));
      peer.deliver(envelope, frame);
    }
  }
}
