import { createHash } from "node:crypto";
import type { Uri } from "../../ahp/types.js";

/**
 * How long after an input was accepted its retry is recognised: a client that lost its socket
 * retries the actions it had in flight once it has reconnected, which takes seconds (VS Code backs
 * off to 30 s at most), so two minutes covers a slow reconnect.
 */
const RETRY_GRACE_MS = 120_000;
/** Inputs remembered per client: only the few in flight when a socket dropped are ever retried. */
const ENTRIES_PER_CLIENT = 64;
/** Clients whose inputs are remembered; the least recent are forgotten first. */
const MAX_CLIENTS = 1000;
/** Inputs longer than this are remembered by a digest, so a pasted megabyte is not kept twice. */
const INLINE_CHARS = 256;

interface Entry {
  channel: Uri;
  clientSeq: number;
  key: string;
  /** The serverSeq its echo carried (the data itself is not kept: a retry carries the same). */
  serverSeq: number;
  connection: number;
  at: number;
}

/**
 * Inputs accepted from 1.1 clients, so a replayed input is never executed twice: after a reconnect
 * a client may send again, with its original `clientSeq`, an input whose echo it never saw. The
 * same input (client, channel, clientSeq and data) arriving from a later connection of that client
 * is a retry; one repeated on the same connection is a new keystroke.
 */
export class InputJournal {
  private readonly clients = new Map<string, Entry[]>();
  private readonly connections = new WeakMap<object, number>();
  private nextConnection = 1;

  constructor(private readonly now: () => number = Date.now) {}

  /** The serverSeq of the echo an earlier connection of the same client got for this very input, when this is its retry. */
  retried(connection: object, clientId: string, channel: Uri, clientSeq: number, data: string): number | undefined {
    const entries = this.clients.get(clientId);
    if (!entries) return undefined;
    const id = this.idOf(connection);
    const since = this.now() - RETRY_GRACE_MS;
    let key: string | undefined;
    for (const entry of entries) {
      if (entry.at < since || entry.connection === id || entry.channel !== channel || entry.clientSeq !== clientSeq) continue;
      if (entry.key === (key ??= keyOf(data))) return entry.serverSeq;
    }
    return undefined;
  }

  /** Remembers an accepted input and the serverSeq of its echo. */
  record(connection: object, clientId: string, channel: Uri, clientSeq: number, serverSeq: number, data: string): void {
    const entries = this.clients.get(clientId) ?? [];
    this.clients.delete(clientId);
    const since = this.now() - RETRY_GRACE_MS;
    const kept = entries.filter((entry) => entry.at >= since).slice(-(ENTRIES_PER_CLIENT - 1));
    kept.push({ channel, clientSeq, key: keyOf(data), serverSeq, connection: this.idOf(connection), at: this.now() });
    this.clients.set(clientId, kept);
    if (this.clients.size > MAX_CLIENTS) this.clients.delete(this.clients.keys().next().value!);
  }

  private idOf(connection: object): number {
    let id = this.connections.get(connection);
    if (id === undefined) this.connections.set(connection, (id = this.nextConnection++));
    return id;
  }
}

function keyOf(data: string): string {
  return data.length <= INLINE_CHARS ? `=${data}` : `#${data.length}:${createHash("sha256").update(data).digest("base64")}`;
}
