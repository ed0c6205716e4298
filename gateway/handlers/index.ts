import type { Connection } from "../connection.js";
import { authenticate } from "./authenticate.js";
import { dispatchAction } from "./dispatch-action.js";
import { initialize, reconnect } from "./handshake.js";
import { subscribe, unsubscribe } from "./subscriptions.js";
import { createTerminal, disposeTerminal } from "./terminals.js";

/** A request handler: its result, or a thrown JsonRpcError. */
export interface RequestHandler {
  run(params: unknown, connection: Connection): unknown;
  /** True for the methods allowed before the handshake. */
  beforeHandshake?: boolean;
}

/** Every request method the gateway answers; anything else is -32601. (`ping` is answered by the connection itself.) */
export const REQUEST_HANDLERS: Readonly<Record<string, RequestHandler>> = {
  initialize: { run: initialize, beforeHandshake: true },
  reconnect: { run: reconnect, beforeHandshake: true },
  subscribe: { run: subscribe },
  createTerminal: { run: createTerminal },
  disposeTerminal: { run: disposeTerminal },
  listSessions: { run: () => ({ items: [] }) },
  authenticate: { run: authenticate },
};

/** Every notification the gateway acts on; others are ignored, as notifications never get a reply. */
export const NOTIFICATION_HANDLERS: Readonly<Record<string, (params: unknown, connection: Connection) => void>> = {
  dispatchAction,
  unsubscribe,
};
