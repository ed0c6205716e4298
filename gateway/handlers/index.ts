import { authenticate } from "./authenticate.js";
import { CLIENT_NAMES_METHOD, clientNames } from "./client-names.js";
import { dispatchAction, dispatchActionRequest } from "./dispatch-action.js";
import { initialize, reconnect } from "./handshake.js";
import type { HandlerTables } from "./session.js";
import { subscribe, unsubscribe } from "./subscriptions.js";
import { createTerminal, disposeTerminal } from "./terminals.js";

/** Every request method the gateway answers (anything else is -32601; `ping` is answered by the connection itself), and every notification it acts on (others are ignored, as notifications never get a reply). */
export const GATEWAY_HANDLERS: HandlerTables = {
  requests: {
    initialize: { run: initialize, beforeHandshake: true },
    reconnect: { run: reconnect, beforeHandshake: true },
    subscribe: { run: subscribe },
    createTerminal: { run: createTerminal },
    disposeTerminal: { run: disposeTerminal },
    listSessions: { run: () => ({ items: [] }) },
    authenticate: { run: authenticate },
    dispatchAction: { run: dispatchActionRequest },
    [CLIENT_NAMES_METHOD]: { run: clientNames },
  },
  notifications: {
    dispatchAction,
    unsubscribe,
  },
};
