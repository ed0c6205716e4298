import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { ROOT_URI, type Uri } from "../../ahp/types.js";
import { fetchResume } from "../terminals/output-resume.js";
import { fetchForSnapshots, type SnapshotAdditions } from "./snapshot-additions.js";
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
export function resumesFor(resumeFrom: ReadonlyMap<Uri, number>, uris: readonly Uri[], { store, terminals }: Pick<GatewayServices, "store" | "terminals">): Promise<SnapshotAdditions> {
  return fetchForSnapshots(uris, { terminals }, (uri) => uri !== ROOT_URI && resumeFrom.has(uri), (link) => fetchResume(link, store, resumeFrom.get(link.uri)!), {
    resumeUnavailable: "the terminal has been released",
  });
}
