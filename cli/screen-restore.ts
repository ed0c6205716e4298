import { setTimeout as delay } from "node:timers/promises";
import { contentText } from "../ahp/content-text.js";
import type { AhpConnection } from "./connection.js";

/**
 * A reset of this terminal that a restored screen is drawn into, as fresh as the one it was rendered
 * for, but that keeps the scrollback (a full reset, RIS, would clear the lines above, and the banner
 * saying how to detach with them): back to the normal screen, its lines scrolled up into the
 * scrollback, then a soft reset (DECSTR: attributes, modes, scroll region, character sets), mouse
 * reporting and bracketed paste off, and the screen cleared with the cursor home.
 */
export function resetKeepingScrollback(rows: number): string {
  return `\x1b[?1049l\x1b[${rows};1H${"\n".repeat(rows)}\x1b[!p\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?25h\x1b[H\x1b[2J`;
}
/** Times a screen is asked for again when it was rendered before a size change had reached the runner (a few ms each, usually once). */
const SCREEN_RETRIES = 20;
/** Pause between those asks, in ms: about what the runner takes to apply a resize and the gateway to hear of it. */
const SCREEN_RETRY_MS = 50;

/** A terminal's snapshot and what to write into this terminal to show it as it is now: after a reset, or after what it shows when `resumed`. */
export interface RestoredScreen {
  snapshot: { state: any; fromSeq: number; _meta?: Record<string, any> };
  drawing: string;
  /** True when `drawing` is the output since the offset asked to resume from: it goes on from what is shown, without a reset. */
  resumed: boolean;
  /** Why the screen came as the transcript instead (from the gateway, or because it offers none). */
  fallback?: string;
}

/**
 * Subscribes to a terminal asking for its rendered screen (docs/ahp.md, `_meta.screen`) and, given
 * the offset where the output shown ends, for the output since (`_meta.resumeFrom`): the drawing is
 * that output when the gateway could read it, else the screen, or, when the gateway has none, the
 * transcript. A screen the gateway gave up on because the size changed while it was rendered (as
 * this client's own resize does, just before) is asked for again.
 */
export async function subscribeRestoring(connection: AhpConnection, uri: string, resumeFrom?: number): Promise<RestoredScreen> {
  const resume = resumeFrom === undefined ? {} : { resumeFrom: { [uri]: resumeFrom } };
  for (let attempt = 0; ; attempt++) {
    const { snapshot } = await connection.call("subscribe", { channel: uri, _meta: { screen: true, ...resume } });
    const missed = snapshot._meta?.resume;
    if (missed?.from === resumeFrom && typeof missed?.data === "string") return { snapshot, drawing: missed.data, resumed: true };
    const screen = snapshot._meta?.screen;
    if (screen && typeof screen.data === "string") return { snapshot, drawing: screen.data, resumed: false };
    const reason: string = snapshot._meta?.screenUnavailable ?? "the gateway offers no screens";
    if (attempt < SCREEN_RETRIES && reason.includes("resized")) {
      await delay(SCREEN_RETRY_MS);
      continue;
    }
    return { snapshot, drawing: contentText(snapshot.state), resumed: false, fallback: reason };
  }
}
