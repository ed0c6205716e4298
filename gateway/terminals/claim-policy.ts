import type { TerminalClaim } from "../../ahp/types.js";

/**
 * Why a claim change is refused, or undefined when it is allowed: the client holding a terminal
 * may hand it to anyone; anyone may rescope a session's claim within the same session (and chat),
 * adding or dropping the turn and tool call; nothing else.
 */
export function claimChangeRefusal(current: TerminalClaim, next: TerminalClaim, clientId: string): string | undefined {
  if (current.kind === "client") {
    return current.clientId === clientId ? undefined : `the terminal is held by client ${current.clientId}; only the holder can hand it over`;
  }
  const sameSession = next.kind === "session" && next.session === current.session;
  const sameChat = next.kind === "session" && (current.chat === undefined || next.chat === undefined || next.chat === current.chat);
  if (sameSession && sameChat) return undefined;
  return `the terminal is held by session ${current.session}; its claim can only be rescoped within that session`;
}
