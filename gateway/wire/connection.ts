import type { ChannelFlowControl } from "../../ahp/channel-delivery.js";
import { notificationFrame } from "../../ahp/json-rpc.js";
import { authRequiredParams, shapeEnvelope } from "../../ahp/shaping.js";
import { ROOT_URI, type ActionEnvelope, type Snapshot, type Uri } from "../../ahp/types.js";
import { featuresOf, type ProtocolVersion, type VersionFeatures } from "../../ahp/versions.js";
import { principalId, type Principal } from "../auth/access.js";
import type { Grant } from "../auth/grants.js";
import type { GatewayServices, HandlerTables } from "../handlers/session.js";
import { ConnectionSocket, type SocketLike } from "./connection-socket.js";
import { envelopeWithOffset, frameWithOffset } from "./offset-frame.js";
import { RequestDispatch, type DispatchedSession } from "./request-dispatch.js";
import { SessionAccess } from "./session-access.js";

/** Features assumed before a handshake (nothing is shaped before one). */
const UNNEGOTIATED = featuresOf("0.9.0");

/**
 * One WebSocket's session, as the handlers see it: the handshake and negotiated version, who it is
 * signed in as and what that lets it reach, the root list as it may see it, and its windowed
 * subscriptions. Frames go in and out through its socket side (ConnectionSocket), requests through
 * its dispatch (RequestDispatch).
 */
export class Connection extends ConnectionSocket implements DispatchedSession {
  clientId = "";
  private readonly access: SessionAccess;
  private negotiated: ProtocolVersion | undefined;
  private current: VersionFeatures = UNNEGOTIATED;
  private readonly requests: RequestDispatch;
  private offsets = false;

  constructor(
    socket: SocketLike,
    private readonly services: GatewayServices,
    handlers: HandlerTables,
  ) {
    super(socket, services.log);
    this.requests = new RequestDispatch(this, handlers, services);
    this.access = new SessionAccess(services.access, (channel) => services.store.ownerOf(channel), () => this.lapse());
    services.metrics?.connections.inc();
  }

  /** Handles one inbound text frame. */
  receive(text: string): void {
    this.requests.receive(text);
  }

  /** The negotiated protocol version; undefined before `initialize` or `reconnect`. */
  get version(): ProtocolVersion | undefined {
    return this.negotiated;
  }

  /** The wire features of the negotiated version. */
  get features(): VersionFeatures {
    return this.current;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  get principal(): Principal | undefined {
    return this.access.principal;
  }

  handshake(clientId: string, version: ProtocolVersion, fresh: boolean): void {
    if (this.clientId && this.clientId !== clientId) this.services.clients.detach(this.clientId, this);
    this.clientId = clientId;
    this.negotiated = version;
    this.current = featuresOf(version);
    this.services.clients.remember(clientId, version, this, fresh);
    this.nameUser();
  }

  signIn(principal: Principal | undefined, expiresAtMs?: number): void {
    this.access.signIn(principal, expiresAtMs);
    this.nameUser();
    this.afterThisReply(() => this.reviewListScope());
  }

  requireAccess(grant: Grant | undefined, channel?: Uri): void {
    const error = this.access.errorFor(grant, channel);
    if (error) throw error;
  }

  accessRefusal(grant: Grant | undefined, channel?: Uri): string | undefined {
    return this.access.errorFor(grant, channel)?.message;
  }

  lists(owner: string | undefined): boolean {
    return this.access.lists(owner);
  }

  shape(envelope: ActionEnvelope): ActionEnvelope {
    const shaped = this.shapeForVersion(envelope);
    return this.offsets ? envelopeWithOffset(shaped) : shaped;
  }

  get wantsOffsets(): boolean {
    return this.offsets;
  }

  useOffsets(on: boolean): void {
    this.offsets = on;
  }

  /** An envelope in this connection's version's shape, its root list narrowed to what it may list. */
  private shapeForVersion(envelope: ActionEnvelope): ActionEnvelope {
    const { action } = envelope;
    if (action.type !== "root/terminalsChanged" || this.access.listsAll) return shapeEnvelope(envelope, this.current);
    const { store } = this.services;
    const terminals = action.terminals.filter((row) => this.lists(store.ownerOf(row.resource)));
    return shapeEnvelope({ ...envelope, action: { ...action, terminals } }, this.current);
  }

  closeAfterThisReply(code: number, reason: string): void {
    this.requests.closeAfterThisReply(code, reason);
  }

  afterThisReply(step: () => void): void {
    this.requests.afterThisReply(step);
  }

  openWindow(channel: Uri, flowControl: ChannelFlowControl, bootstrap: { snapshot: Snapshot } | { replay: readonly ActionEnvelope[] }): void {
    const messages =
      "snapshot" in bootstrap
        ? [notificationFrame("channel/snapshot", { channel, snapshot: bootstrap.snapshot })]
        : bootstrap.replay.map((envelope) => notificationFrame("action", this.shapeForVersion(envelope)));
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

  deliveryControl(method: string, params: unknown, frameChars: number): void {
    this.windows.fromClient(method, params, frameChars);
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
    const principal = this.access.principal;
    if (this.closed || !principal) return;
    const standing = this.services.access.standing(principal);
    if (!standing) this.access.signIn(undefined);
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

  protected frameFor(envelope: ActionEnvelope, shared: string): string {
    // The shared frame lists every terminal; a connection that may list fewer gets its own.
    if (envelope.action.type === "root/terminalsChanged") return this.access.listsAll ? shared : notificationFrame("action", this.shape(envelope));
    // Output offsets ride ordinary subscriptions only: a windowed one's messages are cut to the client's limits without them.
    return this.offsets && !this.windows.has(envelope.channel) ? frameWithOffset(envelope, shared) : shared;
  }

  protected snapshotFrame(channel: Uri): string | undefined {
    const snapshot = this.services.store.snapshot(channel, this);
    if (!snapshot) return undefined;
    this.told(snapshot.fromSeq);
    return notificationFrame("channel/snapshot", { channel, snapshot });
  }

  protected roomChanged(channel?: Uri): void {
    this.services.store.channels.roomChanged(this, channel);
  }

  protected windowEnded(channel: Uri): void {
    this.services.store.channels.unsubscribe(channel, this);
    this.services.clients.forgetWindow(this.clientId, channel);
  }

  protected framedMessage(message: Record<string, unknown>, done: () => void): void {
    this.requests.receiveFramed(message, done);
  }

  protected forget(): void {
    this.access.dispose();
    this.services.metrics?.connections.dec();
    this.services.store.channels.unsubscribeAll(this);
    if (this.clientId) this.services.clients.detach(this.clientId, this);
  }

  /** Tells the client registry which person this client is, when it is signed in as one (the connection token's holder is nobody by name). */
  private nameUser(): void {
    const principal = this.access.principal;
    if (this.clientId && principal?.kind === "user") this.services.clients.signedIn(this.clientId, principal.id);
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

  /** Takes the root list's scope again; when it shows other terminals now, a subscribed root channel gets the list as this connection may see it. */
  private reviewListScope(): void {
    if (this.closed || !this.access.rescope()) return;
    const { store } = this.services;
    if (store.channels.isSubscribed(ROOT_URI, this)) this.sendEnvelope(this.shape(store.privateTerminalList()));
  }
}
