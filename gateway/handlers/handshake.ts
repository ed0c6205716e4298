import { ErrorCode } from "../../ahp/error-codes.js";
import { shapeEnvelope } from "../../ahp/shaping.js";
import type { Snapshot } from "../../ahp/types.js";
import { negotiateVersion, SUPPORTED_VERSIONS } from "../../ahp/versions.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { TERMINAL_COMMAND_PREFIX } from "../backend/turn-commands.js";
import { objectParams, stringField, stringList } from "./params.js";
import type { GatewayServices, Session } from "./session.js";

/** WebSocket close code after a failed version negotiation. */
const CLOSE_PROTOCOL_ERROR = 1002;

/** `initialize`: picks the first offered version this gateway speaks and returns snapshots of the channels asked for. */
export function initialize(params: unknown, session: Session, { store, terminals, info }: GatewayServices): unknown {
  const p = objectParams(params, "initialize");
  if (!Array.isArray(p.protocolVersions)) throw new JsonRpcError(ErrorCode.InvalidParams, "initialize needs a protocolVersions list");
  const clientId = stringField(p, "clientId", "initialize");
  const version = negotiateVersion(p.protocolVersions);
  if (!version) {
    session.closeAfterThisReply(CLOSE_PROTOCOL_ERROR, "no common protocol version");
    const offered = p.protocolVersions.length ? p.protocolVersions.map(String).join(", ") : "none";
    throw new JsonRpcError(ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version (offered: ${offered})`, {
      supportedVersions: [...SUPPORTED_VERSIONS],
    });
  }
  session.handshake(clientId, version);
  const snapshots: Snapshot[] = [];
  for (const uri of stringList(p, "initialSubscriptions", "initialize", false)) {
    // Channels this connection may not read are skipped like unknown ones; it can subscribe after signing in.
    if (store.isTerminal(uri) && session.accessRefusal("terminal:output")) continue;
    const snapshot = store.snapshot(uri, session);
    if (!snapshot) continue;
    store.channels.subscribe(uri, session);
    snapshots.push(snapshot);
  }
  const result: Record<string, unknown> = {
    protocolVersion: version,
    serverSeq: store.serverSeq,
    snapshots,
    defaultDirectory: info.defaultDirectory,
  };
  if (session.features.serverInfo) {
    result.serverInfo = info.serverInfo;
    if (terminals.servesTerminals) result.terminalCommandPrefix = TERMINAL_COMMAND_PREFIX;
  }
  return result;
}

/**
 * `reconnect`: resumes a known client with the version it negotiated before. When the replay buffer
 * still reaches back to `lastSeenServerSeq`, the missed envelopes are returned (channels that are
 * gone, or that this connection may no longer read, are listed as missing); otherwise fresh snapshots. An unknown clientId is an error, so the
 * client falls back to `initialize`.
 */
export function reconnect(params: unknown, session: Session, { store, clients, metrics }: GatewayServices): unknown {
  const p = objectParams(params, "reconnect");
  const clientId = stringField(p, "clientId", "reconnect");
  const lastSeen = p.lastSeenServerSeq;
  if (typeof lastSeen !== "number") throw new JsonRpcError(ErrorCode.InvalidParams, "reconnect needs a numeric lastSeenServerSeq");
  const version = clients.versionOf(clientId);
  if (!version) {
    metrics?.reconnects.inc({ result: "unknown_client" });
    throw new JsonRpcError(ErrorCode.InvalidParams, `Unknown clientId ${clientId}: send initialize instead`);
  }
  session.handshake(clientId, version);
  const wanted = stringList(p, "subscriptions", "reconnect", false);
  const readable = (uri: string): boolean => store.hasChannel(uri) && !(store.isTerminal(uri) && session.accessRefusal("terminal:output"));
  const existing = wanted.filter(readable);
  for (const uri of existing) store.channels.subscribe(uri, session);
  const replay = store.actions.since(lastSeen, new Set(existing));
  metrics?.reconnects.inc({ result: replay ? "replay" : "snapshot" });
  if (replay) {
    return {
      type: "replay",
      actions: replay.map((envelope) => shapeEnvelope(envelope, session.features)),
      missing: wanted.filter((uri) => !readable(uri)),
    };
  }
  return { type: "snapshot", snapshots: existing.map((uri) => store.snapshot(uri, session)!) };
}
