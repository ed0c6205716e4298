import type { Readable } from "node:stream";
import { createContextKey, createContextValues, type ContextValues } from "@connectrpc/connect";

/** The remote address of the connection a call came on (undefined when the socket no longer knows it). */
export const PEER_ADDRESS = createContextKey<string | undefined>(undefined, { description: "the caller's remote address" });

/** The request a call came on, as node hands it over: the direct methods read its body as it arrives (direct-grpc.ts). */
export const CALL_BODY = createContextKey<Readable | undefined>(undefined, { description: "the call's request body as it arrives" });

/** The context values a call starts with: its caller's address, for the refusal log, and its request's body. */
export function callContextValues(request: Readable & { socket: { remoteAddress?: string } }): ContextValues {
  return createContextValues().set(PEER_ADDRESS, request.socket.remoteAddress).set(CALL_BODY, request);
}
