import { ErrorCode } from "../ahp/error-codes.js";
import type { Connection } from "../connection.js";
import { JsonRpcError } from "../json-rpc.js";
import { objectParams, stringField } from "./params.js";

/** The longest a subscriber may ask output to wait for batching. */
const MAX_DELIVERY_LATENCY_MS = 1_000;

/**
 * `subscribe` (with `delivery.maxLatencyMs`, output for it is batched up to that long): a fresh snapshot every time (re-subscribing is normal); unknown channels are -32008.
 * A terminal needs `terminal:output`; the root list stays readable to every connection.
 */
export function subscribe(params: unknown, connection: Connection): unknown {
  const p = objectParams(params, "subscribe");
  const channel = stringField(p, "channel", "subscribe");
  const { host } = connection.context;
  if (host.isTerminal(channel)) connection.requireAccess("terminal:output");
  const snapshot = host.snapshot(channel, connection);
  if (!snapshot) throw new JsonRpcError(ErrorCode.NotFound, `No terminal at ${channel}`);
  host.channels.subscribe(channel, connection);
  const latency = (p.delivery as { maxLatencyMs?: unknown } | undefined)?.maxLatencyMs;
  if (typeof latency === "number" && latency > 0) connection.maxLatencyMs.set(channel, Math.min(latency, MAX_DELIVERY_LATENCY_MS));
  else connection.maxLatencyMs.delete(channel);
  return { snapshot };
}

/** `unsubscribe` (a notification): stops sending that channel's envelopes to this connection. */
export function unsubscribe(params: unknown, connection: Connection): void {
  const channel = stringField(objectParams(params, "unsubscribe"), "channel", "unsubscribe");
  connection.context.host.channels.unsubscribe(channel, connection);
}
