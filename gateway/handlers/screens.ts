import { ROOT_URI, type Snapshot, type TerminalState, type Uri } from "../../ahp/types.js";
import { captureScreen, type CapturedScreen } from "../terminals/screen-capture.js";
import type { GatewayServices } from "./session.js";

/** Adds a terminal snapshot's `_meta` (its screen, or why there is none); other snapshots pass unchanged. */
export type ScreenAdder = (snapshot: Snapshot) => Snapshot;

/** True when a request's `_meta` asks for terminal screens: `{ "_meta": { "screen": true } }`. */
export function wantsScreens(params: Record<string, unknown>): boolean {
  const meta = params._meta;
  return typeof meta === "object" && meta !== null && (meta as { screen?: unknown }).screen === true;
}

/**
 * Renders the screens of the open terminals among `uris`, to be added to their snapshots taken in
 * the same turn as this resolves (so each screen stands where its snapshot's content ends). A
 * terminal no longer open gets `screenUnavailable`.
 */
export async function screensFor(uris: readonly Uri[], { store, terminals }: Pick<GatewayServices, "store" | "terminals">): Promise<ScreenAdder> {
  const captures = new Map<Uri, Promise<CapturedScreen>>();
  for (const uri of new Set(uris)) {
    const link = uri === ROOT_URI ? undefined : terminals.linkAt(uri);
    if (link) captures.set(uri, captureScreen(link, store));
  }
  const captured = new Map<Uri, CapturedScreen>();
  for (const [uri, capture] of captures) captured.set(uri, await capture);
  // The snapshots are taken in the turn this resolves in; a screen none of them took stops following its terminal after it.
  setImmediate(() => {
    for (const screen of captured.values()) screen.release();
  });
  return (snapshot) => {
    if (snapshot.resource === ROOT_URI) return snapshot;
    const screen = captured.get(snapshot.resource);
    const meta = screen ? screen.finish(snapshot.state as TerminalState) : { screenUnavailable: "the terminal has been released" };
    return { ...snapshot, _meta: { ...snapshot._meta, ...meta } };
  };
}
