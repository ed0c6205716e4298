import { ROOT_URI, type Uri } from "../../ahp/types.js";
import { captureScreen } from "../terminals/screen-capture.js";
import { fetchForSnapshots, type SnapshotAdditions } from "./snapshot-additions.js";
import type { GatewayServices } from "./session.js";

/** True when a request's `_meta` turns `flag` on: `{ "_meta": { "<flag>": true } }` (only `true` asks). */
export function metaFlag(params: Record<string, unknown>, flag: "screen" | "offsets"): boolean {
  const meta = params._meta;
  return typeof meta === "object" && meta !== null && (meta as Record<string, unknown>)[flag] === true;
}

/**
 * Renders the screens of the open terminals among `uris`, to be added to their snapshots taken in
 * the same turn as this resolves, or as what is fetched with them (so each screen stands where its
 * snapshot's content ends). A terminal no longer open gets `screenUnavailable`.
 */
export function screensFor(uris: readonly Uri[], { store, terminals }: Pick<GatewayServices, "store" | "terminals">): Promise<SnapshotAdditions> {
  return fetchForSnapshots(uris, { terminals }, (uri) => uri !== ROOT_URI, (link) => captureScreen(link, store), { screenUnavailable: "the terminal has been released" });
}
