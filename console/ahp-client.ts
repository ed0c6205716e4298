import type { ActionEnvelope } from "../gateway/ahp/types.js";

/** A channel's state as the gateway sends it. */
export interface Snapshot {
  resource: string;
  state: any;
  fromSeq: number;
}

/** How the page learns what happens on the connection. */
export interface ClientEvents {
  /**
   * A connection is (again) initialized: `snapshots` are fresh states of channels to show (none when
   * missed actions are replayed instead), `lost` the watched channels that no longer exist.
   */
  ready(snapshots: Snapshot[], lost: string[]): void;
  /** An action envelope, replayed after a reconnect or live. */
  action(envelope: ActionEnvelope): void;
  /** The socket is gone; a reconnect is coming. */
  offline(reason: string): void;
}

/** A JSON-RPC error the gateway answered with. */
export class RpcError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly data: any,
  ) {
    super(message);
  }
}

/** The error code of a request that needs a signed-in user. */
export const AUTH_REQUIRED = -32007;

/** First pause before reconnecting; doubled on each failure. */
const RECONNECT_MIN_MS = 250;
/** Longest pause between reconnect attempts. */
const RECONNECT_MAX_MS = 5_000;

/**
 * The page's AHP connection: initializes, keeps the channels it watches, and when the socket drops
 * comes back with `reconnect` (missed actions replayed) or, if the gateway no longer knows this tab,
 * with `initialize` and fresh snapshots.
 */
export class AhpClient {
  private socket: WebSocket | undefined;
  private nextId = 1;
  private clientSeq = 1;
  private lastSeq = 0;
  private handshaken = false;
  /** This page's client id (claims made by it name it). */
  readonly clientId = `console-${crypto.randomUUID()}`;
  private readonly pending = new Map<number, { resolve(result: any): void; reject(err: Error): void }>();
  private readonly watched = new Set<string>(["ahp-root://"]);
  private delay = RECONNECT_MIN_MS;
  /** The sign-in to repeat on every new socket. */
  private credentials: { resource: string; token: string } | undefined;

  constructor(
    private readonly url: string,
    private readonly events: ClientEvents,
  ) {}

  /** Opens the connection (and keeps it open). */
  start(): void {
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onopen = () => void this.handshake();
    socket.onmessage = (message) => this.receive(JSON.parse(String(message.data)));
    socket.onclose = (event) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error("connection lost"));
      this.pending.clear();
      this.events.offline(event.code === 1006 && !this.handshaken ? "cannot connect (is the token in the page's address right?)" : `disconnected (${event.code})`);
      setTimeout(() => this.start(), this.delay);
      this.delay = Math.min(this.delay * 2, RECONNECT_MAX_MS);
    };
  }

  /** A request's result. */
  call(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket?.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  /** Signs this page in as a user (and again after every reconnect); throws RpcError for a wrong token. */
  async signIn(resource: string, token: string): Promise<void> {
    await this.call("authenticate", { channel: "ahp-root://", resource, token });
    this.credentials = { resource, token };
  }

  /** Dispatches an action. */
  dispatch(channel: string, action: Record<string, unknown>): void {
    this.socket?.send(JSON.stringify({ jsonrpc: "2.0", method: "dispatchAction", params: { channel, clientSeq: this.clientSeq++, action } }));
  }

  /** Subscribes to a channel (again) and returns its snapshot. */
  async watch(channel: string): Promise<Snapshot> {
    this.watched.add(channel);
    try {
      const { snapshot } = await this.call("subscribe", { channel });
      return snapshot;
    } catch (err) {
      this.watched.delete(channel);
      throw err;
    }
  }

  /** Stops following a channel. */
  unwatch(channel: string): void {
    this.watched.delete(channel);
    this.socket?.send(JSON.stringify({ jsonrpc: "2.0", method: "unsubscribe", params: { channel } }));
  }

  private receive(frame: any): void {
    if (frame.id !== undefined) {
      const waiter = this.pending.get(frame.id);
      this.pending.delete(frame.id);
      if (frame.error) waiter?.reject(new RpcError(frame.error.message, frame.error.code, frame.error.data));
      else waiter?.resolve(frame.result);
    } else if (frame.method === "action") {
      this.lastSeq = Math.max(this.lastSeq, frame.params.serverSeq);
      this.events.action(frame.params);
    }
  }

  private async handshake(): Promise<void> {
    const subscriptions = [...this.watched];
    let snapshots: Snapshot[] = [];
    let replayed: ActionEnvelope[] = [];
    let lost: string[];
    const resumed = this.handshaken ? await this.call("reconnect", { channel: "ahp-root://", clientId: this.clientId, lastSeenServerSeq: this.lastSeq, subscriptions }).catch(() => undefined) : undefined;
    if (resumed?.type === "replay") {
      replayed = resumed.actions;
      lost = resumed.missing;
    } else if (resumed) {
      snapshots = resumed.snapshots;
      lost = absent(subscriptions, snapshots);
    } else {
      // A first connection, or a gateway that no longer knows this tab (it restarted): start over.
      const result = await this.call("initialize", {
        channel: "ahp-root://",
        protocolVersions: ["0.9.0", "0.8.0", "0.7.0", "0.6.0"],
        clientId: this.clientId,
        clientInfo: { name: "ahp-terminal-console" },
        initialSubscriptions: subscriptions,
      });
      this.handshaken = true;
      this.lastSeq = result.serverSeq;
      snapshots = result.snapshots;
      lost = absent(subscriptions, snapshots);
    }
    this.delay = RECONNECT_MIN_MS;
    if (this.credentials) {
      // A new socket is signed out: sign in again and take back the channels that needed the user.
      await this.call("authenticate", { channel: "ahp-root://", ...this.credentials }).catch(() => (this.credentials = undefined));
      for (const channel of this.credentials ? lost.splice(0) : []) {
        const fresh = await this.call("subscribe", { channel }).catch(() => undefined);
        if (fresh) snapshots.push(fresh.snapshot);
        else lost.push(channel);
      }
    }
    for (const channel of lost) this.watched.delete(channel);
    this.events.ready(snapshots, lost);
    for (const envelope of replayed) this.receive({ method: "action", params: envelope });
  }
}

function absent(channels: string[], snapshots: Array<{ resource: string }>): string[] {
  return channels.filter((channel) => !snapshots.some((snapshot) => snapshot.resource === channel));
}
