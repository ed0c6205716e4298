import { utf16Bytes, type ChannelFlowControl } from "../../ahp/channel-delivery.js";
import { FrameAssembler } from "../../ahp/frame-assembler.js";
import { FrameCursor } from "../../ahp/frame-cursor.js";
import { SendWindow } from "../../ahp/send-window.js";
import type { Uri } from "../../ahp/types.js";
import type { Pace } from "../state/channels.js";

/**
 * How long a viewer may keep its window full without returning credit before it stops setting the
 * terminal's pace: the runner's own rule for a subscriber that takes nothing. It then falls behind
 * alone and recovers by snapshot once it returns credit.
 */
const STALL_MS = 2_000;
/** The least bytes of messages that may wait for a viewer's credit before it counts as fallen behind (twice its window when that is more). */
const MIN_PENDING_BYTES = 1024 * 1024;

type Item = { text: string; bytes: number } | { control: string; last?: true };

/** What a windowed subscription tells its connection. */
export interface SubscriptionHooks {
  /** It has frames to send now. */
  work(subscription: WindowedSubscription): void;
  /** Its pace changed (room, busy, fell behind or caught up). */
  room(subscription: WindowedSubscription): void;
  /** A fresh `channel/snapshot` message of the channel, to recover a viewer that fell behind; undefined when the channel is gone. */
  snapshot(channel: Uri): string | undefined;
  /** It cannot go on (a message its limits cannot carry): reset it with this reason. */
  fail(subscription: WindowedSubscription, reason: string): void;
  /** Its last control (the `channel/reset` that ends it once everything before was sent) has been taken. */
  finished(subscription: WindowedSubscription): void;
}

/**
 * One connection's windowed subscription to one channel: the messages waiting for credit, the one
 * being cut into frames, the window towards the client and the assembler of the client's own
 * frames. Nothing is sent before `activate` (the subscribe reply goes first). A viewer whose
 * waiting messages outgrow their bound falls behind: they are dropped, and once it has credit again
 * it gets a fresh snapshot and live messages after it.
 */
export class WindowedSubscription {
  readonly outbound: SendWindow;
  readonly inbound: FrameAssembler;
  private queue: Item[] = [];
  private head = 0;
  private pendingBytes = 0;
  private cursor: FrameCursor | undefined;
  private active = false;
  private behind = false;
  private stalled = false;
  private stallTimer: NodeJS.Timeout | undefined;
  private finishing = false;
  private readonly pendingLimit: number;

  constructor(
    readonly channel: Uri,
    readonly flowControl: ChannelFlowControl,
    private readonly hooks: SubscriptionHooks,
  ) {
    this.outbound = new SendWindow(flowControl.clientReceive);
    this.inbound = new FrameAssembler(flowControl.hostReceive);
    this.pendingLimit = Math.max(MIN_PENDING_BYTES, 2 * flowControl.clientReceive.windowBytes);
  }

  /** Queues the bootstrap (a snapshot, or the replay after a checkpoint) and `channel/ready` after it; never counts as falling behind. */
  bootstrap(messages: readonly string[], ready: string): void {
    for (const text of messages) this.push({ text, bytes: utf16Bytes(text) });
    this.queue.push({ control: ready });
  }

  /** Starts sending (after the reply that accepted the window). */
  activate(): void {
    this.active = true;
    this.hooks.work(this);
  }

  /**
   * Ends the subscription after what is queued: `control` (a `channel/reset`) goes out last, and
   * nothing is taken after it. A viewer that fell behind, or has nothing queued, gets it next.
   */
  finish(control: string): void {
    if (this.behind) {
      this.queue = [];
      this.head = 0;
      this.pendingBytes = 0;
      this.behind = false;
    }
    this.queue.push({ control, last: true });
    this.finishing = true;
    if (this.active) this.hooks.work(this);
  }

  /** Queues a live message (a notification's text); a viewer too far behind drops it and will get a snapshot. */
  enqueue(text: string): void {
    if (this.behind || this.finishing) return;
    const bytes = utf16Bytes(text);
    if (this.pendingBytes + bytes > this.pendingLimit) return this.fallBehind();
    this.push({ text, bytes });
    if (this.active) this.hooks.work(this);
  }

  /** How this viewer sets the channel's pace: room while what it has in flight and waiting is below its window. */
  pace(): Pace {
    if (this.behind || this.stalled) return "detached";
    return this.outbound.outstanding + this.pendingBytes < this.flowControl.clientReceive.windowBytes ? "ready" : "busy";
  }

  /** The client released messages up to `consumedBytes`; throws DeliveryError for a position it was never sent. */
  credit(consumedBytes: number): void {
    this.outbound.credit(consumedBytes);
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    this.stalled = false;
    this.hooks.room(this);
    if (this.active) this.hooks.work(this);
  }

  /** The next frame to send, or undefined while there is none (nothing queued, or no credit). */
  nextFrame(): string | undefined {
    if (!this.active) return undefined;
    if (this.cursor) return this.advance(this.cursor);
    if (this.behind && this.outbound.open) this.recover();
    const item = this.queue[this.head];
    if (!item) return undefined;
    if ("control" in item) {
      this.shift();
      if (item.last) queueMicrotask(() => this.hooks.finished(this));
      return item.control;
    }
    if (!this.outbound.open) return this.watchStall();
    this.shift();
    this.pendingBytes -= item.bytes;
    if (!this.outbound.fits(item.bytes)) {
      this.hooks.fail(this, `a message of ${item.bytes} bytes exceeds maximumMessageBytes ${this.flowControl.clientReceive.maximumMessageBytes}`);
      return undefined;
    }
    this.outbound.start(item.bytes);
    return this.advance((this.cursor = new FrameCursor(this.channel, item.text, this.flowControl.clientReceive.maximumFrameBytes)));
  }

  /** True when nothing is queued or being sent. */
  get idle(): boolean {
    return this.cursor === undefined && this.head >= this.queue.length;
  }

  /** Stops everything (unsubscribed, reset, or the socket is gone). */
  dispose(): void {
    this.active = false;
    clearTimeout(this.stallTimer);
    this.queue = [];
    this.head = 0;
    this.pendingBytes = 0;
    this.cursor = undefined;
  }

  private advance(cursor: FrameCursor): string {
    const frame = cursor.next();
    if (cursor.done) {
      this.outbound.finish();
      this.cursor = undefined;
      if (!this.outbound.open) this.watchStall();
    }
    return frame;
  }

  private fallBehind(): void {
    this.behind = true;
    // Controls (a pending `channel/ready`) still go out; every message is replaced by the snapshot to come.
    this.queue = this.queue.slice(this.head).filter((item) => "control" in item);
    this.head = 0;
    this.pendingBytes = 0;
    this.hooks.room(this);
  }

  private recover(): void {
    const snapshot = this.hooks.snapshot(this.channel);
    if (snapshot === undefined) return;
    this.behind = false;
    this.queue.splice(this.head, 0, { text: snapshot, bytes: utf16Bytes(snapshot) });
    this.pendingBytes += utf16Bytes(snapshot);
    this.hooks.room(this);
  }

  private watchStall(): undefined {
    if (this.stallTimer) return undefined;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      this.stalled = true;
      this.hooks.room(this);
    }, STALL_MS);
    this.stallTimer.unref();
    return undefined;
  }

  private push(item: Item): void {
    this.queue.push(item);
    if ("bytes" in item) this.pendingBytes += item.bytes;
  }

  private shift(): void {
    this.queue[this.head++] = undefined as never;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
