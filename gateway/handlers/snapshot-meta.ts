import { ROOT_URI, type Uri } from "../../ahp/types.js";
import { parseResumeFrom, resumesFor } from "./resume.js";
import { metaFlag, screensFor } from "./screens.js";
import type { SnapshotAdder } from "./snapshot-additions.js";
import type { GatewayServices, Session } from "./session.js";

/** What a request asks to have added to its terminal snapshots' `_meta` (docs/ahp.md). */
export interface SnapshotMetaRequest {
  /** `_meta.screen: true`: each terminal's rendered screen. */
  screens: boolean;
  /** `_meta.offsets: true` (a handshake's): output offsets on this connection's snapshots and output. */
  offsets: boolean;
  /** `_meta.resumeFrom`: the output since these offsets. */
  resumeFrom: ReadonlyMap<Uri, number>;
}

/** What a request's `_meta` asks for; -32602 for a malformed `resumeFrom` (checked before the request changes anything). */
export function parseSnapshotMeta(params: Record<string, unknown>, method: string): SnapshotMetaRequest {
  return { screens: metaFlag(params, "screen"), offsets: metaFlag(params, "offsets"), resumeFrom: parseResumeFrom(params, method) };
}

/**
 * Fetches what the snapshots of `uris` are to carry in `_meta` (screens and resumes, from the
 * runner) and returns what adds it, with each open terminal's output offset for a connection that
 * asked for offsets; undefined when nothing is to be added. The snapshots must be taken in the turn
 * this resolves in: from there to the reply nothing waits.
 */
export async function snapshotMetaFor(request: SnapshotMetaRequest, uris: readonly Uri[], session: Session, services: GatewayServices): Promise<SnapshotAdder | undefined> {
  const wanted = request.resumeFrom.size > 0 && uris.some((uri) => request.resumeFrom.has(uri));
  // Both follow their terminals until the snapshots are taken: neither lets go before the other is fetched.
  const [screens, resumes] = await Promise.all([request.screens ? screensFor(uris, services) : undefined, wanted ? resumesFor(request.resumeFrom, uris, services) : undefined]);
  // The snapshots are taken in the turn this resolves in; what none of them took stops following its terminal after it.
  setImmediate(() => {
    screens?.release();
    resumes?.release();
  });
  const offsets = session.wantsOffsets;
  if (!screens && !resumes && !offsets) return undefined;
  return (snapshot) => {
    let added = screens ? screens.add(snapshot) : snapshot;
    if (resumes) added = resumes.add(added);
    const link = offsets && added.resource !== ROOT_URI ? services.terminals.linkAt(added.resource) : undefined;
    // Where the content ends, read in the turn the snapshot is taken.
    return link ? { ...added, _meta: { ...added._meta, offset: link.outputOffset } } : added;
  };
}
