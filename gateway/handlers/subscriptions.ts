import { DeliveryError, parseReceiveLimits, type ChannelFlowControl } from "../../ahp/channel-delivery.js";
import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import type { Snapshot } from "../../ahp/types.js";
import { acceptFlowControl, MAX_WINDOWED_CHANNELS } from "./delivery-limits.js";
import { objectParams, stringField } from "./params.js";
import { parseSnapshotMeta, snapshotMetaFor } from "./snapshot-meta.js";
import type { GatewayServices, Session } from "./session.js";

/** The longest a subscriber may ask output to wait for batching. */
const MAX_DELIVERY_LATENCY_MS = 1_000;

/**
 * `subscribe` (with `delivery.maxLatencyMs`, output for it is batched up to that long): a fresh snapshot every time (re-subscribing is normal); unknown channels are -32008.
 * A terminal needs `terminal:output` and reach (it is the person's own, the host's, or they hold
 * `terminal:others`); the root channel stays readable to every connection, listing what it may reach. A terminal
 * this gateway does not follow yet is followed from now on, and answered once its state is rebuilt from the runner. From 1.0 a released terminal still kept answers
 * with its exited state; from 1.1 `flowControl` is accepted (limits lowered to the gateway's
 * maxima): the reply carries the limits instead of the snapshot, which follows in frames. With
 * `_meta: { screen: true }` a terminal's snapshot carries its rendered screen in `_meta`, with
 * `_meta.resumeFrom` the output since a client's offset, and on a connection that asked for offsets
 * where its content ends (docs/ahp.md).
 */
export async function subscribe(params: unknown, session: Session, services: GatewayServices): Promise<unknown> {
  const { store, terminals, limits } = services;
  const p = objectParams(params, "subscribe");
  const channel = stringField(p, "channel", "subscribe");
  const meta = parseSnapshotMeta(p, "subscribe");
  const flowControl = windowFor(p.flowControl, channel, session, limits.maxFrameBytes);
  if (store.isTerminal(channel)) {
    session.requireAccess("terminal:output", channel);
    await terminals.caughtUp([channel]);
  }
  // Rendered (and read) before the snapshot is taken: from here to the reply nothing waits, so the screen stands where the content ends.
  const withMeta = store.isTerminal(channel) ? await snapshotMetaFor(meta, [channel], session, services) : undefined;
  const live = store.snapshot(channel, session);
  const ended = live || !session.features.historicalTerminals ? undefined : store.endedSnapshot(channel, session);
  if (ended) session.requireAccess("terminal:output", channel);
  const found: Snapshot | undefined = live ?? ended;
  const snapshot = found && withMeta ? withMeta(found) : found;
  if (!snapshot) throw new JsonRpcError(ErrorCode.NotFound, `No terminal at ${channel}`);
  if (live) store.channels.subscribe(channel, session);
  session.told(snapshot.fromSeq);
  const latency = (p.delivery as { maxLatencyMs?: unknown } | undefined)?.maxLatencyMs;
  session.setDeliveryLatency(channel, typeof latency === "number" && latency > 0 ? Math.min(latency, MAX_DELIVERY_LATENCY_MS) : undefined);
  if (!flowControl) {
    session.closeWindow(channel);
    return { snapshot };
  }
  session.openWindow(channel, flowControl, { snapshot });
  return { flowControl };
}

/** `unsubscribe` (a notification): stops sending that channel's envelopes to this connection. */
export function unsubscribe(params: unknown, session: Session, { store }: GatewayServices): void {
  const channel = stringField(objectParams(params, "unsubscribe"), "channel", "unsubscribe");
  session.closeWindow(channel);
  store.channels.unsubscribe(channel, session);
}

/** The window a subscribe asks for, as accepted; undefined when none is asked for or it is declined (below 1.1, or too many windows). */
function windowFor(offer: unknown, channel: string, session: Session, maxFrameBytes: number): ChannelFlowControl | undefined {
  if (offer === undefined || !session.features.windowedDelivery) return undefined;
  if (session.windowCount >= MAX_WINDOWED_CHANNELS && !session.hasWindow(channel)) return undefined;
  try {
    return acceptFlowControl(channel, parseReceiveLimits((offer as { receive?: unknown } | null)?.receive), maxFrameBytes);
  } catch (err) {
    if (err instanceof DeliveryError) throw new JsonRpcError(ErrorCode.InvalidParams, `subscribe: flowControl.receive: ${err.message}`);
    throw err;
  }
}
