import { authenticate } from "./authenticate.js";
import { dispatchAction, dispatchActionRequest } from "./dispatch-action.js";
import { initialize, reconnect } from "./handshake.js";
import type { GatewayServices, Session } from "./session.js";
import { subscribe, unsubscribe } from "./subscriptions.js";
import { createTerminal, disposeTerminal } from "./terminals.js";

/** A request handler: its result, or a thrown JsonRpcError. */
export interface RequestHandler {
  run(params: unknown, session: Session, services: GatewayServices): unknown;
  /** True for the methods allowed before the handshake. */
  beforeHandshake?: boolean;
}

/** A notification handler: notifications never get a reply. */
export type NotificationHandler = (params: unknown, session: Session, services: GatewayServices) => void;

/** Every request method the gateway answers; anything else is -32601. (`ping` is answered by the connection itself.) */
export const REQUEST_HANDLERS: Readonly<Record<string, RequestHandler>> = {
  initialize: { run: initialize, beforeHandshake: true },
  reconnect: { run: reconnect, beforeHandshake: true },
  subscribe: { run: subscribe },
  createTerminal: { run: createTerminal },
  disposeTerminal: { run: disposeTerminal },
  listSessions: { run: () => ({ items: [] }) },
  authenticate: { run: authenticate },
  dispatchAction: { run: dispatchActionRequest },
};

/** Every notification the gateway acts on; others are ignored, as notifications never get a reply. */
export const NOTIFICATION_HANDLERS: Readonly<Record<string, NotificationHandler>> = {
  dispatchAction,
  unsubscribe,
};
