import { setTimeout as delay } from "node:timers/promises";
import { contentText } from "../ahp/content-text.js";
import type { AhpConnection } from "./connection.js";

/** Full reset (RIS): a restored screen is drawn into a terminal as fresh as the one it was rendered for. */
const RESET = "\x1bc";
/** Times a screen is asked for again when it was rendered before a size change had reached the runner (a few ms each, usually once). */
const SCREEN_RETRIES = 20;
/** Pause between those asks, in ms: about what the runner takes to apply a resize and the gateway to hear of it. */
const SCREEN_RETRY_MS = 50;

/** A terminal's snapshot and what to write into this terminal to show it as it is now. */
export interface RestoredScreen {
  snapshot: { state: any; fromSeq: number; _meta?: Record<string, any> };
  drawing: string;
  /** Why the screen came as the transcript instead (from the gateway, or because it offers none). */
  fallback?: string;
}

/**
 * Subscribes to a terminal asking for its rendered screen (docs/ahp.md, `_meta.screen`): the drawing
 * is a reset and the screen, or, when the gateway has none, a reset and the transcript. A screen the
 * gateway gave up on because the size changed while it was rendered (as this client's own resize
 * does, just before) is asked for again.
 */
export async function subscribeRestoring(connection: AhpConnection, uri: string): Promise<RestoredScreen> {
  for (let attempt = 0; ; attempt++) {
    const { snapshot } = await connection.call("subscribe", { channel: uri, _meta: { screen: true } });
    const screen = snapshot._meta?.screen;
    if (screen && typeof screen.data === "string") return { snapshot, drawing: RESET + screen.data };
    const reason: string = snapshot._meta?.screenUnavailable ?? "the gateway offers no screens";
    if (attempt < SCREEN_RETRIES && reason.includes("resized")) {
      await delay(SCREEN_RETRY_MS);
      continue;
    }
    return { snapshot, drawing: RESET + contentText(snapshot.state), fallback: reason };
  }
}
