import type { Uri } from "./types.js";
import { jsonShapeFault } from "./json-shape.js";

/**
 * Windowed delivery (protocol 1.1): the wire shapes and their strict readers. Every limit and
 * counter is in UTF-16 bytes (`text.length * 2`), whatever the transport's own encoding.
 */

/** Receive limits of one direction of one subscription. */
export interface ChannelReceiveLimits {
  /** Outstanding logical-message bytes the receiver budgets for; a sender starts a message only below it. */
  windowBytes: number;
  /** Largest whole outer `channel/frame` notification, after JSON escaping. */
  maximumFrameBytes: number;
  /** Largest logical message, before outer escaping. */
  maximumMessageBytes: number;
}

/** Accepted limits of both directions. */
export interface ChannelFlowControl {
  clientReceive: ChannelReceiveLimits;
  hostReceive: ChannelReceiveLimits;
}

/** How a resumed windowed channel recovers after `reconnect`. */
export type ChannelRecovery = "replay" | "snapshot" | "live";

/** A windowed channel `reconnect` resumed. */
export interface ResumedChannel {
  channel: Uri;
  flowControl: ChannelFlowControl;
  recovery: ChannelRecovery;
}

/** One windowed channel a client asks `reconnect` to resume, with the last action it applied there. */
export interface WindowResumeRequest {
  channel: Uri;
  lastAppliedServerSeq?: number;
}

/** A `channel/frame` notification's params. */
export interface ChannelFrameParams {
  channel: Uri;
  data: string;
  final?: boolean;
}

/** Delivery controls: never framed, outside data credit. */
export const DELIVERY_CONTROLS: ReadonlySet<string> = new Set(["channel/credit", "channel/ready", "channel/reset"]);

/** A message's size as every limit counts it. */
export function utf16Bytes(text: string): number {
  return text.length * 2;
}

/** A broken delivery rule, with the reason; the subscription it happened on is reset. */
export class DeliveryError extends Error {}

const LIMIT_KEYS = ["windowBytes", "maximumFrameBytes", "maximumMessageBytes"] as const;

/** Reads receive limits: three positive safe integers (unknown keys dropped). */
export function parseReceiveLimits(value: unknown): ChannelReceiveLimits {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new DeliveryError("receive limits must be an object");
  const limits = {} as ChannelReceiveLimits;
  for (const key of LIMIT_KEYS) {
    const number = (value as Record<string, unknown>)[key];
    if (!Number.isSafeInteger(number) || (number as number) < 1) throw new DeliveryError(`${key} must be a positive integer`);
    limits[key] = number as number;
  }
  return limits;
}

/** Reads accepted limits of both directions (a subscribe result, a resumed channel). */
export function parseFlowControl(value: unknown): ChannelFlowControl {
  if (typeof value !== "object" || value === null) throw new DeliveryError("flowControl must be an object");
  const { clientReceive, hostReceive } = value as Record<string, unknown>;
  return { clientReceive: parseReceiveLimits(clientReceive), hostReceive: parseReceiveLimits(hostReceive) };
}

/** Each limit of `offered` at most the matching one of `maxima`: a host may lower a client's limits, never raise them. */
export function lowerLimits(offered: ChannelReceiveLimits, maxima: ChannelReceiveLimits): ChannelReceiveLimits {
  return {
    windowBytes: Math.min(offered.windowBytes, maxima.windowBytes),
    maximumFrameBytes: Math.min(offered.maximumFrameBytes, maxima.maximumFrameBytes),
    maximumMessageBytes: Math.min(offered.maximumMessageBytes, maxima.maximumMessageBytes),
  };
}

/** Reads `channel/frame` params: a channel, non-empty string data, and a boolean `final` when present (kept as given). */
export function parseFrameParams(value: unknown): ChannelFrameParams {
  const { channel, data, final } = channelParams(value, "channel/frame") as Record<string, unknown> & { channel: Uri };
  if (typeof data !== "string" || data === "") throw new DeliveryError("channel/frame needs non-empty string data");
  if (final !== undefined && typeof final !== "boolean") throw new DeliveryError("channel/frame final must be a boolean");
  return final === undefined ? { channel, data } : { channel, data, final };
}

/** Reads `channel/credit` params: a channel and a cumulative non-negative safe integer. */
export function parseCreditParams(value: unknown): { channel: Uri; consumedBytes: number } {
  const { channel, consumedBytes } = channelParams(value, "channel/credit") as Record<string, unknown> & { channel: Uri };
  if (!Number.isSafeInteger(consumedBytes) || (consumedBytes as number) < 0) throw new DeliveryError("consumedBytes must be a non-negative integer");
  return { channel, consumedBytes: consumedBytes as number };
}

/** Reads the `channel` of any delivery notification. */
export function channelParams(value: unknown, method: string): { channel: Uri } {
  if (typeof value !== "object" || value === null || typeof (value as { channel?: unknown }).channel !== "string") {
    throw new DeliveryError(`${method} needs a channel`);
  }
  return value as { channel: Uri };
}

/**
 * Reads `reconnect.windows`: items naming channels that are also in `subscriptions`, each once,
 * with an optional non-negative `lastAppliedServerSeq`.
 */
export function parseWindowResumes(value: unknown, subscriptions: readonly Uri[]): WindowResumeRequest[] {
  const items = (value as { items?: unknown } | null)?.items;
  if (typeof value !== "object" || value === null || !Array.isArray(items)) throw new DeliveryError("windows must be {items: [...]}");
  const seen = new Set<Uri>();
  return items.map((item: unknown) => {
    const { channel, lastAppliedServerSeq: last } = channelParams(item, "windows item") as { channel: Uri; lastAppliedServerSeq?: unknown };
    if (!subscriptions.includes(channel)) throw new DeliveryError(`windows names ${channel}, which is not among the subscriptions`);
    if (seen.has(channel)) throw new DeliveryError(`windows names ${channel} twice`);
    seen.add(channel);
    if (last === undefined) return { channel };
    if (!Number.isSafeInteger(last) || (last as number) < 0) throw new DeliveryError("lastAppliedServerSeq must be a non-negative integer");
    return { channel, lastAppliedServerSeq: last as number };
  });
}

/** Reads the `windows` of a reconnect result: the channels resumed, each with fresh limits and its recovery. */
export function parseResumedChannels(value: unknown): ResumedChannel[] {
  const items = (value as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) throw new DeliveryError("windows must be {items: [...]}");
  return items.map((item: unknown) => {
    const { channel, flowControl, recovery } = channelParams(item, "resumed channel") as { channel: Uri; flowControl?: unknown; recovery?: unknown };
    if (recovery !== "replay" && recovery !== "snapshot" && recovery !== "live") throw new DeliveryError(`unknown recovery ${JSON.stringify(recovery)}`);
    return { channel, flowControl: parseFlowControl(flowControl), recovery };
  });
}

/** Reads a reassembled message: a notification for the same channel that is not itself delivery machinery (never framed twice). */
export function parseFramedMessage(text: string, channel: Uri): Record<string, unknown> {
  const fault = jsonShapeFault(text);
  if (fault) throw new DeliveryError(`a reassembled message is refused: ${fault}`);
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw new DeliveryError("a reassembled message is not JSON");
  }
  const { method, params } = (message ?? {}) as { method?: unknown; params?: { channel?: unknown } };
  if (typeof method !== "string" || typeof params !== "object" || params === null || "id" in (message as object)) {
    throw new DeliveryError("a reassembled message is not a notification");
  }
  if (method === "channel/frame" || DELIVERY_CONTROLS.has(method)) throw new DeliveryError(`${method} must not be framed`);
  if (params.channel !== channel) throw new DeliveryError("the inner and outer channels differ");
  return message as Record<string, unknown>;
}
