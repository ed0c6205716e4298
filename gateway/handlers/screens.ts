import { ROOT_URI, type Snapshot, type TerminalState, type Uri } from "../../ahp/types.js";
import { captureScreen, type CapturedScreen } from "../terminals/screen-capture.js";
import type { GatewayServices } from "./session.js";

/** Adds to a snapshot's `_meta`. */
export type SnapshotAdder = (snapshot: Snapshot) => Snapshot;

/**
 * What was fetched for the snapshots a request is about to take: `add` puts it in a snapshot's
 * `_meta` (other snapshots pass unchanged); `release` stops following the terminals once the
 * snapshots were taken (in the turn the fetching resolved in).
 */
export interface SnapshotAdditions {
  add: SnapshotAdder;
  release(): void;
}

/** True when a request's `_meta` asks for terminal screens: `{ "_meta": { "screen": true } }`. */
export function wantsScreens(params: Record<string, unknown>): boolean {
  const meta = params._meta;
  return typeof meta === "object" && meta !== null && (meta as { screen?: unknown }).screen === true;
}

/**
 * Renders the screens of the open terminals among `uris`, to be added to their snapshots taken in
 * the same turn as this resolves, or as what is fetched with them (so each screen stands where its
 * snapshot's content ends). A terminal no longer open gets `screenUnavailable`.
 */
export async function screensFor(uris: readonly Uri[], { store, terminals }: Pick<GatewayServices, "store" | "terminals">): Promise<SnapshotAdditions> {
  const captures = new Map<Uri, Promise<CapturedScreen>>();
  for (const uri of new Set(uris)) {
    const link = uri === ROOT_URI ? undefined : terminals.linkAt(uri);
    if (link) captures.set(uri, captureScreen(link, store));
  }
  const captured = new Map<Uri, CapturedScreen>();
  for (const [uri, capture] of captures) captured.set(uri, await capture);
  const add: SnapshotAdder = (snapshot) => {
    if (snapshot.resource === ROOT_URI) return snapshot;
    const screen = captured.get(snapshot.resource);
    const meta = screen ? screen.finish(snapshot.state as TerminalState) : { screenUnavailable: "the terminal has been released" };
    return { ...snapshot, _meta: { ...snapshot._meta, ...meta } };
  };
  return { add, release: () => captured.forEach((screen) => screen.release()) };
}
