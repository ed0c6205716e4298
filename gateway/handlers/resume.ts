import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { ROOT_URI, type Uri } from "../../ahp/types.js";
import { fetchResume, type FetchedResume } from "../terminals/output-resume.js";
import type { SnapshotAdder, SnapshotAdditions } from "./screens.js";
import type { GatewayServices } from "./session.js";

/**
 * The offsets a request's `_meta.resumeFrom` asks to resume terminals from: `{ "<terminal uri>": N }`
 * (empty when it asks none); -32602 when it is not such a map or an offset is not a non-negative integer.
 */
export function parseResumeFrom(params: Record<string, unknown>, method: string): Map<Uri, number> {
  const meta = params._meta;
  const value = typeof meta === "object" && meta !== null ? (meta as { resumeFrom?: unknown }).resumeFrom : undefined;
  const offsets = new Map<Uri, number>();
  if (value === undefined) return offsets;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new JsonRpcError(ErrorCode.InvalidParams, `${method}: _meta.resumeFrom must be a map from terminal URIs to output offsets`);
  }
  for (const [uri, offset] of Object.entries(value)) {
    if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) {
      throw new JsonRpcError(ErrorCode.InvalidParams, `${method}: _meta.resumeFrom[${JSON.stringify(uri)}] must be a non-negative integer offset, got ${JSON.stringify(offset)}`);
    }
    offsets.set(uri, offset);
  }
  return offsets;
}

/**
 * Reads what each open terminal among `uris` that `resumeFrom` names wrote since its offset, to be
 * added to their snapshots taken in the same turn as this resolves, or as what is fetched with them
 * (so each resume ends where its snapshot's content does). A terminal no longer open gets `resumeUnavailable`.
 */
export async function resumesFor(resumeFrom: ReadonlyMap<Uri, number>, uris: readonly Uri[], { store, terminals }: Pick<GatewayServices, "store" | "terminals">): Promise<SnapshotAdditions> {
  const fetches = new Map<Uri, Promise<FetchedResume>>();
  for (const uri of new Set(uris)) {
    const from = resumeFrom.get(uri);
    const link = uri === ROOT_URI || from === undefined ? undefined : terminals.linkAt(uri);
    if (link) fetches.set(uri, fetchResume(link, store, from!));
  }
  const fetched = new Map<Uri, FetchedResume>();
  for (const [uri, fetch] of fetches) fetched.set(uri, await fetch);
  const add: SnapshotAdder = (snapshot) => {
    if (!resumeFrom.has(snapshot.resource)) return snapshot;
    const resume = fetched.get(snapshot.resource);
    const meta = resume ? resume.finish() : { resumeUnavailable: "the terminal has been released" };
    return { ...snapshot, _meta: { ...snapshot._meta, ...meta } };
  };
  return { add, release: () => fetched.forEach((resume) => resume.release()) };
}
