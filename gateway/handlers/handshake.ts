import { DeliveryError, parseWindowResumes, type ResumedChannel, type WindowResumeRequest } from "../../ahp/channel-delivery.js";
import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { ROOT_URI, type Snapshot, type Uri } from "../../ahp/types.js";
import { MalformedVersionError, negotiateVersion, SUPPORTED_VERSIONS } from "../../ahp/versions.js";
import { TERMINAL_COMMAND_PREFIX } from "../terminals/terminal-command.js";
import { clientInfoOf } from "./client-names.js";
import { MAX_WINDOWED_CHANNELS } from "./delivery-limits.js";
import { objectParams, stringField, stringList } from "./params.js";
import { parseSnapshotMeta, snapshotMetaFor } from "./snapshot-meta.js";
import type { GatewayServices, Session } from "./session.js";

/** WebSocket close code after a failed version negotiation. */
const CLOSE_PROTOCOL_ERROR = 1002;

/**
 * `initialize`: picks the highest offered version this gateway speaks (any 0.9.x or 1.y.z, the
 * 0.10.0 alias, 0.5.1–0.8.0 exactly), returned as offered; a malformed offer is -32602, nothing
 * spoken -32005 (then the socket closes). Answers once adopted terminals are rebuilt, with
 * snapshots of the channels asked for (from 1.0, released terminals still kept among them), with
 * their rendered screens in `_meta` when its `_meta` is `{ screen: true }`, output since a client's
 * offsets with `_meta.resumeFrom`, and output offsets from then on with `_meta.offsets` (docs/ahp.md).
 */
export async function initialize(params: unknown, session: Session, services: GatewayServices): Promise<unknown> {
  const { store, terminals, info } = services;
  const p = objectParams(params, "initialize");
  if (!Array.isArray(p.protocolVersions)) throw new JsonRpcError(ErrorCode.InvalidParams, "initialize needs a protocolVersions list");
  const clientId = stringField(p, "clientId", "initialize");
  const meta = parseSnapshotMeta(p, "initialize");
  const version = negotiated(p.protocolVersions);
  if (!version) {
    session.closeAfterThisReply(CLOSE_PROTOCOL_ERROR, "no common protocol version");
    const offered = p.protocolVersions.length ? p.protocolVersions.map(String).join(", ") : "none";
    throw new JsonRpcError(ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version (offered: ${offered})`, {
      supportedVersions: [...SUPPORTED_VERSIONS],
    });
  }
  session.handshake(clientId, version, true);
  session.useOffsets(meta.offsets);
  services.clients.describe(clientId, clientInfoOf(p));
  const wanted = stringList(p, "initialSubscriptions", "initialize", false);
  // The terminals asked for are followed from now on, and answered once their state is whole.
  await terminals.caughtUp(wanted);
  const readable = (uri: Uri): boolean => uri === ROOT_URI || !session.accessRefusal("terminal:output", uri);
  // Screens are rendered (and missed output read) before any snapshot is taken: from there to the reply nothing waits.
  const withMeta = await snapshotMetaFor(meta, wanted.filter((uri) => uri !== ROOT_URI && readable(uri)), session, services);
  const snapshots: Snapshot[] = [];
  for (const uri of wanted) {
    const live = uri === ROOT_URI || store.isTerminal(uri);
    const snapshot = live ? store.snapshot(uri, session) : session.features.historicalTerminals ? store.endedSnapshot(uri, session) : undefined;
    // Channels this connection may not read are skipped like unknown ones; it can subscribe after signing in.
    if (!snapshot || !readable(uri)) continue;
    if (live) store.channels.subscribe(uri, session);
    snapshots.push(withMeta ? withMeta(snapshot) : snapshot);
  }
  const result: Record<string, unknown> = {
    protocolVersion: version,
    serverSeq: store.serverSeq,
    snapshots,
    defaultDirectory: info.defaultDirectory,
  };
  session.told(store.serverSeq);
  if (session.features.serverInfo) {
    result.serverInfo = info.serverInfo;
    if (terminals.servesTerminals) result.terminalCommandPrefix = TERMINAL_COMMAND_PREFIX;
  }
  return result;
}

/**
 * `reconnect`: resumes a known client with the version it negotiated before. When the replay buffer
 * still reaches back to `lastSeenServerSeq`, and that is a position this gateway sent that client
 * (not one of an earlier gateway's), the missed envelopes are returned (channels that are gone, or
 * that this connection may no longer read, are listed as missing); otherwise fresh snapshots. An
 * unknown clientId (a restarted gateway's, another replica's) is -32008, so the client falls back to
 * `initialize` on the same socket. From 1.1, `windows`
 * resumes windowed channels on their own (left out of the inline actions and snapshots), each by
 * replay after its checkpoint or by snapshot, listed with fresh limits in the result's `windows`.
 */
export async function reconnect(params: unknown, session: Session, services: GatewayServices): Promise<unknown> {
  const { store, clients, terminals, metrics } = services;
  const p = objectParams(params, "reconnect");
  const clientId = stringField(p, "clientId", "reconnect");
  const lastSeen = p.lastSeenServerSeq;
  if (typeof lastSeen !== "number") throw new JsonRpcError(ErrorCode.InvalidParams, "reconnect needs a numeric lastSeenServerSeq");
  const meta = parseSnapshotMeta(p, "reconnect");
  const version = clients.versionOf(clientId);
  if (!version) {
    metrics?.reconnects.inc({ result: "unknown_client" });
    // -32008 (NotFound): VS Code falls back to initialize on this code only, the official client on any error.
    throw new JsonRpcError(ErrorCode.NotFound, `Unknown clientId ${clientId}: send initialize instead`);
  }
  session.handshake(clientId, version, false);
  session.useOffsets(meta.offsets);
  const wanted = stringList(p, "subscriptions", "reconnect", false);
  const windows = session.features.windowedDelivery && p.windows !== undefined ? windowRequests(p.windows, wanted) : undefined;
  await terminals.caughtUp(wanted);
  const readable = (uri: string): boolean => store.hasChannel(uri) && !(store.isTerminal(uri) && session.accessRefusal("terminal:output", uri));
  const vouched = (seq: number): boolean => store.actions.issued(seq) && clients.couldHaveSeen(clientId, seq);
  const windowed = new Set(windows?.map((request) => request.channel));
  const ordinary = wanted.filter((uri) => !windowed.has(uri));
  // A replay needs a position this gateway gave this client, and every channel whole since it (none rebuilt after it).
  const replayable = vouched(lastSeen) && store.actions.reaches(lastSeen, new Set(ordinary.filter(readable)));
  // Fresh snapshots with screens (and missed output): fetched first, as nothing may wait between a snapshot and the reply.
  const withMeta = replayable ? undefined : await snapshotMetaFor(meta, ordinary.filter(readable), session, services);
  const existing = ordinary.filter(readable);
  for (const uri of existing) store.channels.subscribe(uri, session);
  const replay = replayable ? store.actions.since(lastSeen, new Set(existing)) : undefined;
  metrics?.reconnects.inc({ result: replay ? "replay" : "snapshot" });
  const result: Record<string, unknown> = replay
    ? { type: "replay", actions: replay.map((envelope) => session.shape(envelope)), missing: ordinary.filter((uri) => !readable(uri)) }
    : { type: "snapshot", snapshots: existing.map((uri) => store.snapshot(uri, session)!).map((snapshot) => (withMeta ? withMeta(snapshot) : snapshot)) };
  session.told(replay ? (replay.at(-1)?.serverSeq ?? lastSeen) : store.serverSeq);
  if (windows) result.windows = { items: resume(windows, session, services, readable, vouched) };
  return result;
}

/** The offered versions' pick; a malformed one is -32602. */
function negotiated(offered: readonly unknown[]): string | undefined {
  try {
    return negotiateVersion(offered);
  } catch (err) {
    if (err instanceof MalformedVersionError) throw new JsonRpcError(ErrorCode.InvalidParams, err.message);
    throw err;
  }
}

function windowRequests(value: unknown, subscriptions: readonly Uri[]): WindowResumeRequest[] {
  try {
    return parseWindowResumes(value, subscriptions);
  } catch (err) {
    if (err instanceof DeliveryError) throw new JsonRpcError(ErrorCode.InvalidParams, `reconnect: ${err.message}`);
    throw err;
  }
}

/** Resumes each requested window this client had and may still read (a channel left out is gone), with counters at zero. */
function resume(
  requests: readonly WindowResumeRequest[],
  session: Session,
  { store, clients, log }: GatewayServices,
  readable: (uri: Uri) => boolean,
  vouched: (seq: number) => boolean,
): ResumedChannel[] {
  const resumed: ResumedChannel[] = [];
  for (const { channel, lastAppliedServerSeq: last } of requests) {
    const flowControl = clients.windowOf(session.clientId, channel);
    if (!flowControl || !readable(channel) || session.windowCount >= MAX_WINDOWED_CHANNELS) {
      log.debug({ clientId: session.clientId, channel, known: flowControl !== undefined }, "a window asked for on reconnect is not resumed");
      continue;
    }
    store.channels.subscribe(channel, session);
    const replay = last !== undefined && vouched(last) ? store.actions.since(last, new Set([channel])) : undefined;
    session.openWindow(channel, flowControl, replay ? { replay } : { snapshot: store.snapshot(channel, session)! });
    resumed.push({ channel, flowControl, recovery: replay ? "replay" : "snapshot" });
  }
  return resumed;
}
