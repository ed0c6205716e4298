import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import type { GatewayServices, Session } from "./session.js";

/** A `dispatchAction`'s parts, or why there are none to dispatch (no channel, or no action object: nothing a refusal could name). */
function parts(params: unknown): { channel: string; clientSeq: number; action: Record<string, unknown> } | string {
  if (typeof params !== "object" || params === null || Array.isArray(params)) return "dispatchAction needs params with a channel and an action";
  const { channel, clientSeq, action } = params as Record<string, unknown>;
  if (typeof channel !== "string") return "dispatchAction needs a string channel";
  if (typeof action !== "object" || action === null || Array.isArray(action)) return "dispatchAction needs an action object";
  return { channel, clientSeq: typeof clientSeq === "number" ? clientSeq : 0, action: action as Record<string, unknown> };
}

/** `dispatchAction` (a notification): hands a well-formed action to the dispatcher, which accepts or refuses it with a reason; a malformed one gets nothing, as notifications never do. */
export function dispatchAction(params: unknown, session: Session, { dispatcher }: GatewayServices): void {
  const found = parts(params);
  if (typeof found !== "string") dispatcher.dispatch(session, found.channel, found.clientSeq, found.action);
}

/**
 * `dispatchAction` sent as a request (AHP defines it as a notification; some clients send it with an
 * id): dispatched the same way (the outcome arrives as the accepted or refused envelope), then
 * answered `null`; malformed params are -32602.
 */
export function dispatchActionRequest(params: unknown, session: Session, { dispatcher }: GatewayServices): null {
  const found = parts(params);
  if (typeof found === "string") throw new JsonRpcError(ErrorCode.InvalidParams, found);
  dispatcher.dispatch(session, found.channel, found.clientSeq, found.action);
  return null;
}
