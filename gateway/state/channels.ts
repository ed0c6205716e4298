import { isVersionSensitive, shapeEnvelope } from "../../ahp/shaping.js";
import type { ActionEnvelope, Uri } from "../../ahp/types.js";
import type { VersionFeatures } from "../../ahp/versions.js";
import type { Grant } from "../auth/grants.js";
import { notificationFrame } from "../../ahp/json-rpc.js";

/**
 * How a subscriber stands for a channel's output: it has room for more, it is busy (output waits
 * for it unless another subscriber has room), or it is detached (it fell behind, catches up on its
 * own and sets nobody's pace).
 */
export type Pace = "ready" | "busy" | "detached";

/** A handshaken connection as the host sees it: how to shape for it, send to it, and what it may do. */
export interface Peer {
  readonly clientId: string;
  readonly features: VersionFeatures;
  /** The peer's remote address, for the lines that log what it was refused. */
  readonly address?: string;
  sendFrame(frame: string): void;
  /** Sends an action envelope (its shared frame), batching output when the connection asked for it or falls behind. */
  deliver(envelope: ActionEnvelope, frame: string): void;
  /** Sends an envelope meant for this connection alone (a refusal, its own config's echo), framed on a windowed channel. */
  sendEnvelope(envelope: ActionEnvelope): void;
  /** Whether this connection has room for more of a channel's output now. */
  paceFor(channel: Uri): Pace;
  /** Why this connection may not use `grant` (or act signed in, when undefined), on the terminal at `channel` when given; undefined when it may. */
  accessRefusal(grant: Grant | undefined, channel?: Uri): string | undefined;
  /** Whether this connection's root list shows a terminal with this owner (undefined: none recorded). */
  lists(owner: string | undefined): boolean;
  /** The largest message this connection takes on the channel (a windowed subscription's `maximumMessageBytes`); undefined: no limit. */
  messageLimit(channel: Uri): number | undefined;
  /** The channel's terminal was released: nothing more will come on it. */
  released(channel: Uri): void;
}

const ROOM = Promise.resolve();
const EMPTY: ReadonlySet<Peer> = new Set();

/** Who is subscribed to which channel; sends each envelope to every subscriber in the shape its version reads. */
export class Channels {
  private readonly subscribers = new Map<Uri, Set<Peer>>();

  /** `countChanged`: told of a channel whose number of subscribers changed. */
  constructor(private readonly countChanged: (channel: Uri) => void = () => {}) {}

  /** Outputs waiting for a subscriber with room, per channel. */
  private readonly waiting = new Map<Uri, Set<() => void>>();

  /** Adds a subscription (subscribing twice is one subscription). */
  subscribe(channel: Uri, peer: Peer): void {
    let peers = this.subscribers.get(channel);
    if (!peers) this.subscribers.set(channel, (peers = new Set()));
    if (peers.has(peer)) return;
    peers.add(peer);
    this.recheck(channel);
    this.countChanged(channel);
  }

  /** Removes one subscription. */
  unsubscribe(channel: Uri, peer: Peer): void {
    const peers = this.subscribers.get(channel);
    if (!peers?.delete(peer)) return;
    if (peers.size === 0) this.subscribers.delete(channel);
    this.recheck(channel);
    this.countChanged(channel);
  }

  /** Removes every subscription of a peer (its socket closed). */
  unsubscribeAll(peer: Peer): void {
    for (const channel of this.channelsOf(peer)) this.unsubscribe(channel, peer);
  }

  /** The channels a peer is subscribed to. */
  channelsOf(peer: Peer): Uri[] {
    return [...this.subscribers].filter(([, peers]) => peers.has(peer)).map(([channel]) => channel);
  }

  /** Forgets a channel (its terminal was disposed): nothing more is sent on it, and its subscribers are told. */
  drop(channel: Uri): void {
    const peers = this.subscribers.get(channel);
    this.subscribers.delete(channel);
    for (const peer of peers ?? []) peer.released(channel);
    this.recheck(channel);
    if (peers) this.countChanged(channel);
  }

  /** The largest message every subscriber of the channel takes (the smallest of their limits); undefined when none has one. */
  messageLimit(channel: Uri): number | undefined {
    let limit: number | undefined;
    for (const peer of this.subscribers.get(channel) ?? []) {
      const own = peer.messageLimit(channel);
      if (own !== undefined && (limit === undefined || own < limit)) limit = own;
    }
    return limit;
  }

  /**
   * Resolves once a subscriber of the channel has room for more, or none sets the pace (nobody is
   * subscribed, or every subscriber fell behind), or `signal` aborts. Output is taken from the
   * runner at the pace of the fastest subscriber, so a flood waits in the runner and the process
   * rather than in the gateway. No timer: a subscriber whose room changes says so (`roomChanged`).
   */
  waitForRoom(channel: Uri, signal?: AbortSignal): Promise<void> {
    if (this.hasRoom(channel) || signal?.aborted) return ROOM;
    return new Promise((resolve) => {
      let wakers = this.waiting.get(channel);
      if (!wakers) this.waiting.set(channel, (wakers = new Set()));
      const wake = (): void => {
        wakers.delete(wake);
        if (wakers.size === 0 && this.waiting.get(channel) === wakers) this.waiting.delete(channel);
        signal?.removeEventListener("abort", wake);
        resolve();
      };
      wakers.add(wake);
      signal?.addEventListener("abort", wake, { once: true });
    });
  }

  /** A peer's room may have changed (its socket drained, credit came back): wakes output waiting on `channel`, or on every channel it reads. */
  roomChanged(peer: Peer, channel?: Uri): void {
    if (this.waiting.size === 0) return;
    for (const uri of channel === undefined ? [...this.waiting.keys()] : [channel]) {
      if (this.subscribers.get(uri)?.has(peer)) this.recheck(uri);
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
    const subscribers = this.subscribers.get(envelope.channel);
    // Copied only when the dispatcher is added (an echo), not for every chunk of output.
    const peers: ReadonlySet<Peer> = alsoTo && !subscribers?.has(alsoTo) ? new Set([...(subscribers ?? []), alsoTo]) : (subscribers ?? EMPTY);
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

  private hasRoom(channel: Uri): boolean {
    const peers = this.subscribers.get(channel);
    if (!peers) return true;
    let pacing = false;
    for (const peer of peers) {
      const pace = peer.paceFor(channel);
      if (pace === "ready") return true;
      if (pace === "busy") pacing = true;
    }
    return !pacing;
  }

  private recheck(channel: Uri): void {
    const wakers = this.waiting.get(channel);
    if (wakers && this.hasRoom(channel)) for (const wake of [...wakers]) wake();
  }
}
