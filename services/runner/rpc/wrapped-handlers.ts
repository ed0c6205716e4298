import type { UniversalHandler, UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";

/** A handler's body: what serves one request. */
export type HandlerFn = (request: UniversalServerRequest) => Promise<UniversalServerResponse>;

/**
 * Puts `wrap(handler)` in the place of each of connect's method handlers it wraps (undefined leaves
 * one as it is), keeping what the router reads off a handler (its method, protocols, path).
 */
export function wrapHandlers(handlers: UniversalHandler[], wrap: (handler: UniversalHandler) => HandlerFn | undefined): void {
  for (const [index, handler] of handlers.entries()) {
    const wrapped = wrap(handler);
    if (wrapped) handlers[index] = Object.assign(wrapped, handler);
  }
}
