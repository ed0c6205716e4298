import type { ChannelFlowControl } from "../../ahp/channel-delivery.js";
import type { ActionEnvelope, Snapshot, Uri } from "../../ahp/types.js";
import type { ProtocolVersion } from "../../ahp/versions.js";
import type { Logger } from "../../lib/logger.js";
import type { RateLimitedLog } from "../../lib/rate-limited-log.js";
import type { AccessPolicy, Principal } from "../auth/access.js";
import type { Grant } from "../auth/grants.js";
import type { GatewayMetrics } from "../metrics.js";
import type { Peer } from "../state/channels.js";
import type { ClientRegistry } from "../state/client-registry.js";
import type { StateStore } from "../state/store.js";
import type { Dispatcher } from "../terminals/dispatch.js";
import type { OpenTerminals } from "../terminals/open-terminals.js";
import type { TerminalQuota } from "../terminals/terminal-quota.js";

/** What the gateway tells clients about itself in `initialize`. */
export interface GatewayInfo {
  serverInfo: { name: string; version: string };
  defaultDirectory: Uri;
}

/** One client connection as the handlers see it: a subscriber, plus what a request may change about the connection. */
export interface Session extends Peer {
  /** The negotiated protocol version; undefined before `initialize` or `reconnect`. */
  readonly version: ProtocolVersion | undefined;
  /** Who this connection acts for; undefined while signed out. */
  readonly principal: Principal | undefined;
  /**
   * Records a completed handshake (a repeated `initialize` replaces the clientId and keeps
   * subscriptions); `fresh` for `initialize`, which forgets the windows a `reconnect` would resume.
   */
  handshake(clientId: string, version: ProtocolVersion, fresh: boolean): void;
  /** Signs the connection in as `principal`, or out when undefined; until `expiresAtMs` when given, then the sign-in lapses. */
  signIn(principal: Principal | undefined, expiresAtMs?: number): void;
  /** Throws the -32007 or -32009 a request gets when this connection may not use `grant` (on the terminal at `channel`, when given), or is not signed in. */
  requireAccess(grant: Grant | undefined, channel?: Uri): void;
  /** An envelope as this connection reads it: its version's shape, a root list of only the terminals it may list, and output's offset when it asked for offsets. */
  shape(envelope: ActionEnvelope): ActionEnvelope;
  /** True when the client asked for output offsets on its handshake (`_meta.offsets`, docs/ahp.md). */
  readonly wantsOffsets: boolean;
  /** Records whether the handshake asked for output offsets. */
  useOffsets(on: boolean): void;
  /** The longest this connection lets a channel's output wait to be batched (`subscribe`'s `delivery.maxLatencyMs`); undefined: none. */
  setDeliveryLatency(channel: Uri, maxLatencyMs: number | undefined): void;
  /** Closes the socket once the reply being prepared has been sent. */
  closeAfterThisReply(code: number, reason: string): void;
  /** Runs `step` right after the reply being prepared was sent (a window's frames follow the reply that accepted it). */
  afterThisReply(step: () => void): void;
  /**
   * Makes a channel windowed for this connection, its bootstrap (a snapshot, or the envelopes after
   * a checkpoint) framed first and `channel/ready` after it; frames start once the reply is out.
   */
  openWindow(channel: Uri, flowControl: ChannelFlowControl, bootstrap: { snapshot: Snapshot } | { replay: readonly ActionEnvelope[] }): void;
  /** Makes a channel ordinary again for this connection (or forgets its window). */
  closeWindow(channel: Uri): void;
  /** How many windowed subscriptions this connection holds (those that can carry nothing more are let go first). */
  readonly windowCount: number;
  /** True when the channel is windowed for this connection. */
  hasWindow(channel: Uri): boolean;
  /** Records that the client was told of `serverSeq` (a result's sequence, a snapshot's, a replay's). */
  told(serverSeq: number): void;
}

/** Limits the handlers apply. */
export interface GatewayLimits {
  /** The largest WebSocket frame accepted (UTF-8 bytes). */
  maxFrameBytes: number;
}

/** The parts of the gateway the handlers work with. */
export interface GatewayServices {
  store: StateStore;
  terminals: OpenTerminals;
  dispatcher: Dispatcher;
  clients: ClientRegistry;
  access: AccessPolicy;
  info: GatewayInfo;
  limits: GatewayLimits;
  /** How many terminals each connection and person has open, against their limits. */
  quota: TerminalQuota;
  log: Logger;
  /** Warnings for what clients are refused (sign-ins, permissions), rate limited since clients trigger them at will. */
  refusals: RateLimitedLog;
  metrics?: GatewayMetrics;
}

/** A request handler: its result, or a thrown JsonRpcError. */
export interface RequestHandler {
  run(params: unknown, session: Session, services: GatewayServices): unknown;
  /** True for the methods allowed before the handshake. */
  beforeHandshake?: boolean;
}

/** A notification handler: notifications never get a reply. */
export type NotificationHandler = (params: unknown, session: Session, services: GatewayServices) => void;

/** What a connection dispatches to: a handler per request method, and per notification method. */
export interface HandlerTables {
  requests: Readonly<Record<string, RequestHandler>>;
  notifications: Readonly<Record<string, NotificationHandler>>;
}
