import { ErrorCode } from "../ahp/error-codes.js";
import type { Connection } from "../connection.js";
import { JsonRpcError } from "../json-rpc.js";
import { objectParams, stringField } from "./params.js";

/**
 * `subscribe`: a fresh snapshot every time (re-subscribing is normal); unknown channels are -32008.
 * A terminal needs `terminal:output`; the root list stays readable to every connection.
 */
export function subscribe(params: unknown, connection: Connection): unknown {
  const channel = stringField(objectParams(params, "subscribe"), "channel", "subscribe");
  const { host } = connection.context;
  if (host.isTerminal(channel)) connection.requireAccess("terminal:output");
  const snapshot = host.snapshot(channel, connection);
  if (!snapshot) throw new JsonRpcError(ErrorCode.NotFound, `No terminal at ${channel}`);
  host.channels.subscribe(channel, connection);
  return { snapshot };
}

/** `unsubscribe` (a notification): stops sending that channel's envelopes to this connection. */
export function unsubscribe(params: unknown, connection: Connection): void {
  const channel = stringField(objectParams(params, "unsubscribe"), "channel", "unsubscribe");
  connection.context.host.channels.unsubscribe(channel, connection);
}
