import type { Snapshot, TerminalState, Uri } from "../../ahp/types.js";
import type { TerminalLink } from "../terminals/terminal-link.js";
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

/** What was fetched for one terminal: `finish` gives the `_meta` for its snapshot of `state`, `release` lets go of the terminal. */
export interface FetchedForSnapshot {
  finish(state: TerminalState): object;
  release(): void;
}

/**
 * Fetches, for each open terminal among `uris` that `wants`, what its snapshot is to carry
 * (`fetch`, from the runner), to be added to the snapshots taken in the same turn as this resolves;
 * a terminal it wants that is no longer open gets `released` instead.
 */
export async function fetchForSnapshots(
  uris: readonly Uri[],
  { terminals }: Pick<GatewayServices, "terminals">,
  wants: (uri: Uri) => boolean,
  fetch: (link: TerminalLink) => Promise<FetchedForSnapshot>,
  released: object,
): Promise<SnapshotAdditions> {
  const fetches = new Map<Uri, Promise<FetchedForSnapshot>>();
  for (const uri of new Set(uris)) {
    const link = wants(uri) ? terminals.linkAt(uri) : undefined;
    if (link) fetches.set(uri, fetch(link));
  }
  const fetched = new Map<Uri, FetchedForSnapshot>();
  for (const [uri, pending] of fetches) fetched.set(uri, await pending);
  const add: SnapshotAdder = (snapshot) => {
    if (!wants(snapshot.resource)) return snapshot;
    const meta = fetched.get(snapshot.resource)?.finish(snapshot.state as TerminalState) ?? released;
    return { ...snapshot, _meta: { ...snapshot._meta, ...meta } };
  };
  return { add, release: () => fetched.forEach((each) => each.release()) };
}
