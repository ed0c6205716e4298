import type { GatewayServices, Session } from "./session.js";

/** `dispatchAction` (a notification): hands a well-formed action to the dispatcher, which accepts or refuses it with a reason. */
export function dispatchAction(params: unknown, session: Session, { dispatcher }: GatewayServices): void {
  if (typeof params !== "object" || params === null) return;
  const { channel, clientSeq, action } = params as Record<string, unknown>;
  // Without a channel or an action object there is nothing a refusal could name; a notification gets no error.
  if (typeof channel !== "string" || typeof action !== "object" || action === null || Array.isArray(action)) return;
  dispatcher.dispatch(session, channel, typeof clientSeq === "number" ? clientSeq : 0, action as Record<string, unknown>);
}
