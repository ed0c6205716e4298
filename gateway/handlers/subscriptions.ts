import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { objectParams, stringField } from "./params.js";
import type { GatewayServices, Session } from "./session.js";

/** The longest a subscriber may ask output to wait for batching. */
const MAX_DELIVERY_LATENCY_MS = 1_000;

/**
 * `subscribe` (with `delivery.maxLatencyMs`, output for it is batched up to that long): a fresh snapshot every time (re-subscribing is normal); unknown channels are -32008.
 * A terminal needs `terminal:output`; the root list stays readable to every connection.
 */
export function subscribe(params: unknown, session: Session, { store }: GatewayServices): unknown {
  const p = objectParams(params, "subscribe");
  const channel = stringField(p, "channel", "subscribe");
  if (store.isTerminal(channel)) session.requireAccess("terminal:output");
  const snapshot = store.snapshot(channel, session);
  if (!snapshot) throw new JsonRpcError(ErrorCode.NotFound, `No terminal at ${channel}`);
  store.channels.subscribe(channel, session);
  const latency = (p.delivery as { maxLatencyMs?: unknown } | undefined)?.maxLatencyMs;
  session.setDeliveryLatency(channel, typeof latency === "number" && latency > 0 ? Math.min(latency, MAX_DELIVERY_LATENCY_MS) : undefined);
  return { snapshot };
}

/** `unsubscribe` (a notification): stops sending that channel's envelopes to this connection. */
export function unsubscribe(params: unknown, session: Session, { store }: GatewayServices): void {
  const channel = stringField(objectParams(params, "unsubscribe"), "channel", "unsubscribe");
  store.channels.unsubscribe(channel, session);
}
