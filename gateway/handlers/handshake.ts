import { ErrorCode } from "../ahp/error-codes.js";
import { shapeEnvelope } from "../ahp/shaping.js";
import type { Snapshot } from "../ahp/types.js";
import { negotiateVersion, SUPPORTED_VERSIONS } from "../ahp/versions.js";
import type { Connection } from "../connection.js";
import { JsonRpcError } from "../json-rpc.js";
import { TERMINAL_COMMAND_PREFIX } from "../turn-commands.js";
import { objectParams, stringField, stringList } from "./params.js";

/** WebSocket close code after a failed version negotiation. */
const CLOSE_PROTOCOL_ERROR = 1002;

/** `initialize`: picks the first offered version this gateway speaks and returns snapshots of the channels asked for. */
export function initialize(params: unknown, connection: Connection): unknown {
  const p = objectParams(params, "initialize");
  if (!Array.isArray(p.protocolVersions)) throw new JsonRpcError(ErrorCode.InvalidParams, "initialize needs a protocolVersions list");
  const clientId = stringField(p, "clientId", "initialize");
  const version = negotiateVersion(p.protocolVersions);
  if (!version) {
    connection.closeAfterThisReply(CLOSE_PROTOCOL_ERROR, "no common protocol version");
    const offered = p.protocolVersions.length ? p.protocolVersions.map(String).join(", ") : "none";
    throw new JsonRpcError(ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version (offered: ${offered})`, {
      supportedVersions: [...SUPPORTED_VERSIONS],
    });
  }
  connection.handshake(clientId, version);
  const { host, info } = connection.context;
  const snapshots: Snapshot[] = [];
  for (const uri of stringList(p, "initialSubscriptions", "initialize", false)) {
    // Channels this connection may not read are skipped like unknown ones; it can subscribe after signing in.
    if (host.isTerminal(uri) && connection.accessRefusal("terminal:output")) continue;
    const snapshot = host.snapshot(uri, connection);
    if (!snapshot) continue;
    host.channels.subscribe(uri, connection);
    snapshots.push(snapshot);
  }
  const result: Record<string, unknown> = {
    protocolVersion: version,
    serverSeq: host.actions.serverSeq,
    snapshots,
    defaultDirectory: info.defaultDirectory,
  };
  if (connection.features.serverInfo) {
    result.serverInfo = info.serverInfo;
    if (host.servesTerminals) result.terminalCommandPrefix = TERMINAL_COMMAND_PREFIX;
  }
  return result;
}

/**
 * `reconnect`: resumes a known client with the version it negotiated before. When the replay buffer
 * still reaches back to `lastSeenServerSeq`, the missed envelopes are returned (channels that are
 * gone, or that this connection may no longer read, are listed as missing); otherwise fresh snapshots. An unknown clientId is an error, so the
 * client falls back to `initialize`.
 */
export function reconnect(params: unknown, connection: Connection): unknown {
  const p = objectParams(params, "reconnect");
  const clientId = stringField(p, "clientId", "reconnect");
  const lastSeen = p.lastSeenServerSeq;
  if (typeof lastSeen !== "number") throw new JsonRpcError(ErrorCode.InvalidParams, "reconnect needs a numeric lastSeenServerSeq");
  const { host, clients } = connection.context;
  const { metrics } = connection.context;
  const version = clients.versionOf(clientId);
  if (!version) {
    metrics?.reconnects.inc({ result: "unknown_client" });
    throw new JsonRpcError(ErrorCode.InvalidParams, `Unknown clientId ${clientId}: send initialize instead`);
  }
  connection.handshake(clientId, version);
  const wanted = stringList(p, "subscriptions", "reconnect", false);
  const readable = (uri: string): boolean => host.hasChannel(uri) && !(host.isTerminal(uri) && connection.accessRefusal("terminal:output"));
  const existing = wanted.filter(readable);
  for (const uri of existing) host.channels.subscribe(uri, connection);
  const replay = host.actions.since(lastSeen, new Set(existing));
  metrics?.reconnects.inc({ result: replay ? "replay" : "snapshot" });
  if (replay) {
    return {
      type: "replay",
      actions: replay.map((envelope) => shapeEnvelope(envelope, connection.features)),
      missing: wanted.filter((uri) => !readable(uri)),
    };
  }
  return { type: "snapshot", snapshots: existing.map((uri) => host.snapshot(uri, connection)!) };
}
