import type { ChannelFlowControl } from "../../ahp/channel-delivery.js";
import { ErrorCode, errorCodeName, OK_CODE_NAME } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { authRequiredParams, shapeEnvelope } from "../../ahp/shaping.js";
import { ROOT_URI, type ActionEnvelope, type Snapshot, type Uri } from "../../ahp/types.js";
import { featuresOf, type ProtocolVersion, type VersionFeatures } from "../../ahp/versions.js";
import { principalId, type Principal } from "../auth/access.js";
import { accessError } from "../auth/checks.js";
import type { Grant } from "../auth/grants.js";
import { listScopeOf, sameScope, scopeLists, type ListScope } from "../auth/reach.js";
import { SignIn } from "../auth/sign-in.js";
import type { GatewayServices, HandlerTables, Session } from "../handlers/session.js";
import type { Pace } from "../state/channels.js";
import { errorFrame, notificationFrame, parseMessage, resultFrame, type JsonRpcId } from "../../ahp/json-rpc.js";
import { Outbox } from "./outbox.js";
import { WindowedDelivery } from "./windowed-delivery.js";

/** What a connection needs of its WebSocket. */
export interface SocketLike {
  /** Sends a text frame; `onWritten` is called once it has reached the socket. */
  send(frame: string, onWritten?: () => void): void;
  close(code: number, reason: string): void;
  /** Drops the connection without a closing handshake. */
  terminate(): void;
  readonly bufferedAmount: number;
}

/** How long a client closed for not reading gets to take the closing frame before the connection is dropped. */
const OVERFLOW_CLOSE_GRACE_MS = 1_000;
/** WebSocket close code for a peer that cannot keep up. */
const CLOSE_TRY_AGAIN_LATER = 1013;
/** Unsent bytes under which an ordinary subscriber has room for more output. */
const ROOM_BYTES = 1024 * 1024;
/** Delivery controls a client sends outside the request order (flow control must not wait behind a slow request). */
const DELIVERY_METHODS: ReadonlySet<string> = new Set(["channel/frame", "channel/credit", "channel/reset"]);
/** Features assumed before a handshake (nothing is shaped before one). */
const UNNEGOTIATED = featuresOf("0.9.0");

/**
 * One WebSocket's side of the protocol: the handshake and negotiated version, and the frames in
 * and out. Messages are handled in arrival order (so `createTerminal` then `subscribe` works even
 * pipelined), except `ping`, which is answered at once, before a handshake too, and delivery
 * controls (credit, frames, resets), which windowed delivery takes as they come.
 */
export class Connection implements Session {
  clientId = "";
  private readonly signedIn: SignIn;
  private negotiated: ProtocolVersion | undefined;
  private current: VersionFeatures = UNNEGOTIATED;
  private pending: Promise<void> = Promise.resolve();
  private closeAfterReply: { code: number; reason: string } | undefined;
  private afterReply: Array<() => void> = [];
  private closed = false;
  private readonly outbox: Outbox;
  private readonly windows: WindowedDelivery;
  /** The highest serverSeq this connection sent its client (so a reconnect can tell what it may have seen). */
  highestSent = 0;
  /** Per channel, the longest this connection lets output wait to be batched (`subscribe`'s `delivery.maxLatencyMs`). */
  private readonly maxLatencyMs = new Map<Uri, number>();
  /** Which terminals this connection's root list shows, as of its last sign-in or access review. */
  private listScope: ListScope;

  constructor(
    private readonly socket: SocketLike,
    private readonly services: GatewayServices,
    private readonly handlers: HandlerTables,
  ) {
    this.signedIn = new SignIn(services.access.initialPrincipal(), () => this.lapse());
    this.listScope = this.currentListScope();
    services.metrics?.connections.inc();
    this.outbox = new Outbox(
      socket,
      (buffered) => {
        services.log.warn({ clientId: this.clientId, buffered }, "client is not reading; disconnecting");
        this.close(CLOSE_TRY_AGAIN_LATER, "too much unread output; reconnect");
        // The closing frame waits behind everything unread; a client that reads nothing would never see it.
        setTimeout(() => socket.terminate(), OVERFLOW_CLOSE_GRACE_MS).unref();
      },
      () => {
        this.services.store.channels.roomChanged(this);
        this.windows.drained();
      },
    );
    this.windows = new WindowedDelivery({
      send: (frame) => this.sendFrame(frame),
      get bufferedAmount() {
        return socket.bufferedAmount;
      },
      snapshotMessage: (channel) => {
        const snapshot = services.store.snapshot(channel, this);
        if (!snapshot) return undefined;
        this.told(snapshot.fromSeq);
        return notificationFrame("channel/snapshot", { channel, snapshot });
      },
      room: (channel) => services.store.channels.roomChanged(this, channel),
      ended: (channel) => {
        services.store.channels.unsubscribe(channel, this);
        services.clients.forgetWindow(this.clientId, channel);
      },
      received: (message, done) => {
        this.pending = this.pending.then(() => {
          this.handleNotification(message.method as string, message.params);
          done();
        });
      },
      log: services.log,
    });
  }

  /** Bytes sent to this connection that it has not taken yet. */
  get buffered(): number {
    return this.outbox.buffered;
  }

  deliver(envelope: ActionEnvelope, frame: string): void {
    if (this.closed) return;
    if (envelope.serverSeq > this.highestSent) this.highestSent = envelope.serverSeq;
    // The shared frame lists every terminal; a connection that may list fewer gets its own.
    if (envelope.action.type === "root/terminalsChanged" && this.listScope.kind !== "all") frame = notificationFrame("action", this.shape(envelope));
    if (this.windows.size !== 0 && this.windows.deliver(envelope.channel, frame)) return;
    if (envelope.action.type === "terminal/data") {
      this.outbox.sendData(envelope as ActionEnvelope & { action: { type: "terminal/data"; data: string } }, frame, this.maxLatencyMs.get(envelope.channel) ?? 0);
    } else {
      this.outbox.send(frame);
    }
  }

  sendEnvelope(envelope: ActionEnvelope): void {
    if (this.closed) return;
    this.told(envelope.serverSeq);
    const frame = notificationFrame("action", envelope);
    if (!this.windows.deliver(envelope.channel, frame)) this.outbox.send(frame);
  }

  paceFor(channel: Uri): Pace {
    return this.windows.pace(channel) ?? (this.outbox.buffered < ROOM_BYTES ? "ready" : "busy");
  }

  get principal(): Principal | undefined {
    return this.signedIn.principal;
  }

  signIn(principal: Principal | undefined, expiresAtMs?: number): void {
    this.signedIn.set(principal, expiresAtMs);
    this.afterThisReply(() => this.reviewListScope());
  }

  requireAccess(grant: Grant | undefined, channel?: Uri): void {
    const error = this.accessErrorFor(grant, channel);
    if (error) throw error;
  }

  accessRefusal(grant: Grant | undefined, channel?: Uri): string | undefined {
    return this.accessErrorFor(grant, channel)?.message;
  }

  lists(owner: string | undefined): boolean {
    return scopeLists(this.listScope, owner);
  }

  messageLimit(channel: Uri): number | undefined {
    return this.windows.size === 0 ? undefined : this.windows.messageLimit(channel);
  }

  released(channel: Uri): void {
    if (this.windows.has(channel)) this.windows.finish(channel);
  }

  shape(envelope: ActionEnvelope): ActionEnvelope {
    const { action } = envelope;
    if (action.type !== "root/terminalsChanged" || this.listScope.kind === "all") return shapeEnvelope(envelope, this.current);
    const { store } = this.services;
    const terminals = action.terminals.filter((row) => this.lists(store.ownerOf(row.resource)));
    return shapeEnvelope({ ...envelope, action: { ...action, terminals } }, this.current);
  }

  setDeliveryLatency(channel: Uri, maxLatencyMs: number | undefined): void {
    if (maxLatencyMs === undefined) this.maxLatencyMs.delete(channel);
    else this.maxLatencyMs.set(channel, maxLatencyMs);
  }

  /** The negotiated protocol version; undefined before `initialize` or `reconnect`. */
  get version(): ProtocolVersion | undefined {
    return this.negotiated;
  }

  /** The wire features of the negotiated version. */
  get features(): VersionFeatures {
    return this.current;
  }

  handshake(clientId: string, version: ProtocolVersion, fresh: boolean): void {
    if (this.clientId && this.clientId !== clientId) this.services.clients.detach(this.clientId, this);
    this.clientId = clientId;
    this.negotiated = version;
    this.current = featuresOf(version);
    this.services.clients.remember(clientId, version, this, fresh);
  }

  told(serverSeq: number): void {
    if (serverSeq > this.highestSent) this.highestSent = serverSeq;
  }

  closeAfterThisReply(code: number, reason: string): void {
    this.closeAfterReply = { code, reason };
  }

  afterThisReply(step: () => void): void {
    this.afterReply.push(step);
  }

  openWindow(channel: Uri, flowControl: ChannelFlowControl, bootstrap: { snapshot: Snapshot } | { replay: readonly ActionEnvelope[] }): void {
    const messages =
      "snapshot" in bootstrap
        ? [notificationFrame("channel/snapshot", { channel, snapshot: bootstrap.snapshot })]
        : bootstrap.replay.map((envelope) => notificationFrame("action", this.shape(envelope)));
    for (const seq of "snapshot" in bootstrap ? [bootstrap.snapshot.fromSeq] : bootstrap.replay.map((envelope) => envelope.serverSeq)) this.told(seq);
    this.windows.open(channel, flowControl, messages);
    this.services.clients.rememberWindow(this.clientId, channel, flowControl);
    this.afterThisReply(() => this.windows.activate(channel));
  }

  closeWindow(channel: Uri): void {
    if (!this.windows.has(channel)) return;
    this.windows.close(channel);
    this.services.clients.forgetWindow(this.clientId, channel);
  }

  get windowCount(): number {
    this.windows.prune((channel) => this.services.store.channels.isSubscribed(channel, this));
    return this.windows.size;
  }

  hasWindow(channel: Uri): boolean {
    return this.windows.has(channel);
  }

  /** Handles one inbound text frame. */
  receive(text: string): void {
    const message = parseMessage(text);
    if (message.kind === "invalid") return this.sendFrame(errorFrame(message.id, message.error));
    // The gateway sends no requests, so a response answers nothing.
    if (message.kind === "result" || message.kind === "error") return;
    if (message.kind === "request" && message.method === "ping") return this.sendFrame(resultFrame(message.id, null));
    if (message.kind === "notification" && DELIVERY_METHODS.has(message.method)) {
      if (this.negotiated) this.windows.fromClient(message.method, message.params, text.length);
      return;
    }
    this.pending = this.pending.then(() =>
      message.kind === "request" ? this.handleRequest(message.id, message.method, message.params) : this.handleNotification(message.method, message.params),
    );
  }

  /** Sends a frame (after any output held for batching); a client that stops reading is disconnected before it can pile up gateway memory. */
  sendFrame(frame: string): void {
    if (this.closed) return;
    this.outbox.send(frame);
  }

  /** Closes the socket. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.socket.close(code, reason);
    this.closedByPeer();
  }

  /** Forgets the connection's subscriptions once its socket is gone. */
  closedByPeer(): void {
    if (this.closed) return;
    this.closed = true;
    this.outbox.dispose();
    this.windows.dispose();
    this.signedIn.dispose();
    this.services.metrics?.connections.dec();
    this.services.store.channels.unsubscribeAll(this);
    if (this.clientId) this.services.clients.detach(this.clientId, this);
  }

  /**
   * Checks what this connection holds against what its principal may do now (the users file
   * changed, a secret was rotated, an expiry passed): a principal who may do nothing any more is
   * signed out and asked to sign in again; one who may still act keeps the socket and the root
   * channel and is told of each terminal channel it may no longer read. Either way those
   * subscriptions stop at once, their held output dropped, and the root list is sent again when
   * what it may show changed.
   */
  reviewAccess(): void {
    const principal = this.signedIn.principal;
    if (this.closed || !principal) return;
    const standing = this.services.access.standing(principal);
    if (!standing) this.signedIn.set(undefined);
    const dropped = this.dropTerminalSubscriptions((channel) => !standing || this.accessRefusal("terminal:output", channel) !== undefined, "access revoked");
    const { access, log } = this.services;
    if (!standing) {
      log.info({ clientId: this.clientId, user: principalId(principal), dropped: dropped.length }, "signed out: removed from the users file, expired, or the secret changed");
      this.sendFrame(notificationFrame("auth/required", authRequiredParams(access.resource, "required", this.current)));
    } else if (dropped.length > 0) {
      log.info({ clientId: this.clientId, user: principalId(principal), dropped: dropped.length }, "may no longer read some terminals");
      for (const channel of dropped) this.sendFrame(notificationFrame("auth/required", { ...authRequiredParams(access.resource, "required", this.current), channel }));
    }
    this.reviewListScope();
  }

  /** The sign-in's lifetime ran out: the client is asked to sign in again, and nothing more of the terminals it read reaches it. */
  private lapse(): void {
    if (this.closed) return;
    this.services.log.info({ clientId: this.clientId }, "sign-in expired");
    this.dropTerminalSubscriptions(() => true, "sign-in expired");
    this.sendFrame(notificationFrame("auth/required", authRequiredParams(this.services.access.resource, "expired", this.current)));
    this.reviewListScope();
  }

  /**
   * Ends the terminal subscriptions that `lost` picks and drops what is held for them (a windowed one
   * is reset, so the client drops any half-assembled message); returns their channels.
   */
  private dropTerminalSubscriptions(lost: (channel: Uri) => boolean, reason: string): Uri[] {
    const { channels } = this.services.store;
    const dropped = channels.channelsOf(this).filter((channel) => channel !== ROOT_URI && lost(channel));
    for (const channel of dropped) {
      if (this.windows.has(channel)) this.windows.reset(channel, reason, true);
      channels.unsubscribe(channel, this);
      this.outbox.drop(channel);
    }
    return dropped;
  }

  private accessErrorFor(grant: Grant | undefined, channel: Uri | undefined): JsonRpcError | undefined {
    const { access, store } = this.services;
    const terminal = channel !== undefined && channel !== ROOT_URI ? { owner: store.ownerOf(channel) } : undefined;
    return accessError(access, this.signedIn.principal, grant, terminal);
  }

  private currentListScope(): ListScope {
    const principal = this.signedIn.principal;
    return listScopeOf(principal, principal && this.services.access.standing(principal));
  }

  /** Takes the root list's scope again; when it shows other terminals now, a subscribed root channel gets the list as this connection may see it. */
  private reviewListScope(): void {
    const scope = this.currentListScope();
    if (this.closed || sameScope(scope, this.listScope)) return;
    this.listScope = scope;
    const { store } = this.services;
    if (store.channels.isSubscribed(ROOT_URI, this)) this.sendEnvelope(this.shape(store.privateTerminalList()));
  }

  private async handleRequest(id: JsonRpcId, method: string, params: unknown): Promise<void> {
    // A connection being closed (a failed handshake) runs nothing more, not even what it sent before the close.
    if (this.closed) return;
    const { requests } = this.handlers;
    const handler = Object.hasOwn(requests, method) ? requests[method] : undefined;
    const { metrics } = this.services;
    // Unknown methods are counted under one name, so clients cannot mint label values.
    const label = handler ? method : "unknown";
    const stopTimer = metrics?.requestSeconds.startTimer({ method: label });
    try {
      if (!handler) throw new JsonRpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
      if (!handler.beforeHandshake && !this.negotiated) throw new JsonRpcError(ErrorCode.InvalidRequest, `Send initialize (or reconnect) before ${method}`);
      this.sendFrame(resultFrame(id, await handler.run(params, this, this.services)));
      metrics?.requests.inc({ method: label, code: OK_CODE_NAME });
    } catch (err) {
      if (!(err instanceof JsonRpcError)) this.services.log.error({ err, method }, "unexpected error handling a request");
      const error = err instanceof JsonRpcError ? err : new JsonRpcError(ErrorCode.InternalError, "Internal error");
      metrics?.requests.inc({ method: label, code: errorCodeName(error.code) });
      this.afterReply = [];
      this.sendFrame(errorFrame(id, error));
    } finally {
      stopTimer?.();
    }
    for (const step of this.afterReply.splice(0)) step();
    if (this.closeAfterReply) this.close(this.closeAfterReply.code, this.closeAfterReply.reason);
  }

  private handleNotification(method: string, params: unknown): void {
    const { notifications } = this.handlers;
    const handler = Object.hasOwn(notifications, method) ? notifications[method] : undefined;
    if (!handler || !this.negotiated || this.closed) return;
    try {
      handler(params, this, this.services);
    } catch (err) {
      this.services.log.warn({ err, method }, "ignored a notification that could not be handled");
    }
  }
}
