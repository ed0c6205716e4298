import type { ChannelFlowControl } from "../../ahp/channel-delivery.js";
import type { Uri } from "../../ahp/types.js";
import type { ProtocolVersion } from "../../ahp/versions.js";

/** Client ids remembered for `reconnect`; the oldest are forgotten first. */
const MAX_REMEMBERED_CLIENTS = 10_000;

/** A connection's account of the highest serverSeq it sent its client. */
export interface SentTracker {
  readonly highestSent: number;
}

/** What the gateway knows of who a client is: the person last signed in on it, and the name and version it gave in `initialize`. */
export interface ClientName {
  user?: string;
  client?: string;
  clientVersion?: string;
}

interface ClientRecord {
  version: ProtocolVersion;
  /** Who it is, as far as the gateway knows (`x-clientNames`). */
  name: ClientName;
  /** Accepted windows, kept across sockets so `reconnect` can resume them with the same limits. */
  windows: Map<Uri, ChannelFlowControl>;
  /** The highest serverSeq any closed connection of this client sent it. */
  highestSent: number;
  /** Its connections still open (a reconnect often arrives before the old socket is noticed gone). */
  live: Set<SentTracker>;
}

/**
 * What the gateway remembers of each clientId between sockets, since `reconnect` carries no
 * version and no limits: the exact version negotiated, the windows it had accepted, and the highest
 * serverSeq it was ever sent, so a `lastSeenServerSeq` this gateway never sent that client (one from
 * an earlier gateway) gets snapshots, never a replay. Also who the client is, for clients that show
 * claims by their holder's name; forgotten with the rest of its record.
 */
export class ClientRegistry {
  private readonly records = new Map<string, ClientRecord>();

  /** Records a handshake: `initialize` starts the client afresh (its old windows are forgotten), `reconnect` keeps them. */
  remember(clientId: string, version: ProtocolVersion, connection: SentTracker, fresh: boolean): void {
    const record = this.records.get(clientId);
    this.records.delete(clientId);
    const kept: ClientRecord = record ?? { version, name: {}, windows: new Map(), highestSent: 0, live: new Set() };
    kept.version = version;
    if (fresh) kept.windows.clear();
    kept.live.add(connection);
    this.records.set(clientId, kept);
    if (this.records.size > MAX_REMEMBERED_CLIENTS) this.records.delete(this.records.keys().next().value!);
  }

  /** A connection of the client closed (or took another clientId): what it sent is folded into the record. */
  detach(clientId: string, connection: SentTracker): void {
    const record = this.records.get(clientId);
    if (!record?.live.delete(connection)) return;
    record.highestSent = Math.max(record.highestSent, connection.highestSent);
  }

  /** Records the name and version a client gave in `initialize` (already made safe to show); a later `initialize` replaces them. */
  describe(clientId: string, client: Pick<ClientName, "client" | "clientVersion">): void {
    const record = this.records.get(clientId);
    if (record) record.name = { ...(record.name.user ? { user: record.name.user } : {}), ...client };
  }

  /** Records the person a connection of the client signed in as; the last sign-in names it. */
  signedIn(clientId: string, user: string): void {
    const record = this.records.get(clientId);
    if (record) record.name = { ...record.name, user };
  }

  /** What is known of who a client is, or undefined when nothing is (or the client is unknown). */
  nameOf(clientId: string): ClientName | undefined {
    const name = this.records.get(clientId)?.name;
    return name && Object.keys(name).length > 0 ? { ...name } : undefined;
  }

  /** The version a client negotiated, or undefined for a client this gateway never met. */
  versionOf(clientId: string): ProtocolVersion | undefined {
    return this.records.get(clientId)?.version;
  }

  /** True when this gateway sent the client something at `seq` or later, so it may have seen `seq` here. */
  couldHaveSeen(clientId: string, seq: number): boolean {
    const record = this.records.get(clientId);
    if (!record) return false;
    let highest = record.highestSent;
    for (const connection of record.live) highest = Math.max(highest, connection.highestSent);
    return seq <= highest;
  }

  /** Keeps a window's accepted limits for a later `reconnect`. */
  rememberWindow(clientId: string, channel: Uri, flowControl: ChannelFlowControl): void {
    this.records.get(clientId)?.windows.set(channel, flowControl);
  }

  /** Forgets a window that ended on purpose (unsubscribed, reset, ordinary again). */
  forgetWindow(clientId: string, channel: Uri): void {
    this.records.get(clientId)?.windows.delete(channel);
  }

  /** The limits a client's window on `channel` was accepted with, or undefined. */
  windowOf(clientId: string, channel: Uri): ChannelFlowControl | undefined {
    return this.records.get(clientId)?.windows.get(channel);
  }
}
