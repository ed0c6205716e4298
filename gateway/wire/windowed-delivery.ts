import { channelParams, DeliveryError, parseCreditParams, parseFrameParams, parseFramedMessage, type ChannelFlowControl } from "../../ahp/channel-delivery.js";
import type { Uri } from "../../ahp/types.js";
import type { Logger } from "../../lib/logger.js";
import type { Pace } from "../state/channels.js";
import { FrameScheduler } from "./frame-scheduler.js";
import { notificationFrame } from "../../ahp/json-rpc.js";
import { WindowedSubscription } from "./windowed-subscription.js";

/** Characters of framed messages a connection may have half-assembled at once, over all its channels. */
const MAX_ASSEMBLING_CHARS = 8 * 1024 * 1024;

/** What windowed delivery needs of its connection. */
export interface DeliveryHost {
  /** Writes a frame to the socket, after whatever output is held. */
  send(frame: string): void;
  readonly bufferedAmount: number;
  /** The `channel/snapshot` message of a channel as this connection sees it now, or undefined when it is gone. */
  snapshotMessage(channel: Uri): string | undefined;
  /** A channel's pace for this connection changed. */
  room(channel: Uri): void;
  /** A windowed subscription was reset (by either side): the connection no longer reads the channel. */
  ended(channel: Uri): void;
  /** A whole message the client framed, to handle in order like any other; `done` once it was applied. */
  received(message: Record<string, unknown>, done: () => void): void;
  log: Logger;
}

/**
 * One connection's windowed subscriptions (protocol 1.1): their frames out through one fair
 * scheduler, the client's credit, resets either way, and the client's own framed messages
 * reassembled within the limits it was given. A broken rule resets that channel alone.
 */
export class WindowedDelivery {
  private readonly subscriptions = new Map<Uri, WindowedSubscription>();
  private readonly scheduler: FrameScheduler;
  private assemblingChars = 0;

  constructor(private readonly host: DeliveryHost) {
    this.scheduler = new FrameScheduler(host);
  }

  /** How many windowed subscriptions the connection holds. */
  get size(): number {
    return this.subscriptions.size;
  }

  /** True when the channel is windowed for this connection. */
  has(channel: Uri): boolean {
    return this.subscriptions.has(channel);
  }

  /** Opens (or restarts, counters at zero) a window with its bootstrap messages; nothing is sent before `activate`. */
  open(channel: Uri, flowControl: ChannelFlowControl, bootstrap: readonly string[]): void {
    this.close(channel);
    const subscription = new WindowedSubscription(channel, flowControl, {
      work: (sub) => this.scheduler.wake(sub),
      room: (sub) => this.host.room(sub.channel),
      snapshot: (uri) => this.host.snapshotMessage(uri),
      fail: (sub, reason) => this.reset(sub.channel, reason),
      finished: (sub) => {
        if (this.subscriptions.get(sub.channel) !== sub) return;
        this.close(sub.channel);
        this.host.ended(sub.channel);
      },
    });
    subscription.bootstrap(bootstrap, notificationFrame("channel/ready", { channel }));
    this.subscriptions.set(channel, subscription);
  }

  /** Starts sending on a window (its reply is out). */
  activate(channel: Uri): void {
    this.subscriptions.get(channel)?.activate();
  }

  /** Ends a window quietly (unsubscribed, or subscribed again without one). */
  close(channel: Uri): void {
    const subscription = this.subscriptions.get(channel);
    if (!subscription) return;
    this.assemblingChars -= subscription.inbound.pendingChars;
    subscription.dispose();
    this.scheduler.remove(subscription);
    this.subscriptions.delete(channel);
  }

  /** Ends the windows that will never carry anything again: idle, on channels `live` says the connection no longer reads (disposed, released). */
  prune(live: (channel: Uri) => boolean): void {
    for (const [channel, subscription] of [...this.subscriptions]) if (subscription.idle && !live(channel)) this.close(channel);
  }

  /** Queues a message for a windowed channel; false when the channel is not windowed here. */
  deliver(channel: Uri, text: string): boolean {
    const subscription = this.subscriptions.get(channel);
    if (!subscription) return false;
    subscription.enqueue(text);
    return true;
  }

  /** The channel's pace for this connection, or undefined when it is not windowed. */
  pace(channel: Uri): Pace | undefined {
    return this.subscriptions.get(channel)?.pace();
  }

  /** The largest message the client takes on a windowed channel; undefined when the channel is not windowed here. */
  messageLimit(channel: Uri): number | undefined {
    return this.subscriptions.get(channel)?.flowControl.clientReceive.maximumMessageBytes;
  }

  /** Ends a window once what is queued for it was sent, with a `channel/reset` (its terminal was released). */
  finish(channel: Uri): void {
    this.subscriptions.get(channel)?.finish(notificationFrame("channel/reset", { channel }));
  }

  /**
   * Resets a window: the client is told (`channel/reset`), the subscription ends. A broken rule is
   * logged as a warning; an ending the gateway chose (a sign-in that lapsed, access revoked) at debug.
   */
  reset(channel: Uri, reason: string, expected = false): void {
    if (!this.subscriptions.has(channel)) return;
    if (expected) this.host.log.debug({ channel, reason }, "windowed delivery ended");
    else this.host.log.warn({ channel, reason }, "windowed delivery reset");
    this.close(channel);
    this.host.send(notificationFrame("channel/reset", { channel }));
    this.host.ended(channel);
  }

  /** Handles a delivery notification from the client (`channel/frame`, `channel/credit`, `channel/reset`); `frameChars` is the frame's length. */
  fromClient(method: string, params: unknown, frameChars: number): void {
    let channel: Uri;
    try {
      channel = channelParams(params, method).channel;
    } catch {
      return;
    }
    const subscription = this.subscriptions.get(channel);
    if (!subscription) return;
    try {
      if (method === "channel/credit") subscription.credit(parseCreditParams(params).consumedBytes);
      else if (method === "channel/frame") this.assemble(subscription, params, frameChars);
      else if (method === "channel/reset") {
        this.close(channel);
        this.host.ended(channel);
      }
    } catch (err) {
      if (!(err instanceof DeliveryError)) throw err;
      this.reset(channel, err.message);
    }
  }

  /** Some of what was written reached the socket. */
  drained(): void {
    this.scheduler.drained();
  }

  /** Stops everything (the socket is gone). */
  dispose(): void {
    for (const channel of [...this.subscriptions.keys()]) this.close(channel);
    this.scheduler.dispose();
  }

  private assemble(subscription: WindowedSubscription, params: unknown, frameChars: number): void {
    const { data, final } = parseFrameParams(params);
    const before = subscription.inbound.pendingChars;
    const text = subscription.inbound.push(data, final, frameChars);
    this.assemblingChars += subscription.inbound.pendingChars - before;
    if (this.assemblingChars > MAX_ASSEMBLING_CHARS) throw new DeliveryError(`more than ${MAX_ASSEMBLING_CHARS} characters of framed messages are being assembled on this connection`);
    if (text === undefined) return;
    const message = parseFramedMessage(text, subscription.channel);
    this.host.received(message, () => {
      if (this.subscriptions.get(subscription.channel) !== subscription) return;
      const consumedBytes = subscription.inbound.release();
      this.host.send(notificationFrame("channel/credit", { channel: subscription.channel, consumedBytes }));
    });
  }
}
