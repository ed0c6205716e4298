import { ErrorCode } from "../../ahp/error-codes.js";
import type { ActionEnvelope, Uri } from "../../ahp/types.js";
import { featuresOf, SUPPORTED_VERSIONS, type ProtocolVersion, type VersionFeatures } from "../../ahp/versions.js";
import type { Principal } from "../auth/access.js";
import { accessError } from "../auth/checks.js";
import type { Grant } from "../auth/grants.js";
import { NOTIFICATION_HANDLERS, REQUEST_HANDLERS } from "../handlers/index.js";
import type { GatewayServices, Session } from "../handlers/session.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { errorFrame, parseMessage, resultFrame, type JsonRpcId } from "./json-rpc.js";
import { Outbox } from "./outbox.js";

/** What a connection needs of its WebSocket. */
export interface SocketLike {
  send(frame: string): void;
  close(code: number, reason: string): void;
  /** Drops the connection without a closing handshake. */
  terminate(): void;
  readonly bufferedAmount: number;
}

/** How long a client closed for not reading gets to take the closing frame before the connection is dropped. */
const OVERFLOW_CLOSE_GRACE_MS = 1_000;
/** WebSocket close code for a peer that cannot keep up. */
const CLOSE_TRY_AGAIN_LATER = 1013;

/**
 * One WebSocket's side of the protocol: the handshake and negotiated version, and the frames in
 * and out. Messages are handled in arrival order (so `createTerminal` then `subscribe` works even
 * pipelined), except `ping`, which is answered at once, before a handshake too.
 */
export class Connection implements Session {
  clientId = "";
  private signedIn: Principal | undefined;
  private negotiated: ProtocolVersion | undefined;
  private current: VersionFeatures = featuresOf(SUPPORTED_VERSIONS[0]);
  private pending: Promise<void> = Promise.resolve();
  private closeAfterReply: { code: number; reason: string } | undefined;
  private closed = false;
  private readonly outbox: Outbox;
  /** Per channel, the longest this connection lets output wait to be batched (`subscribe`'s `delivery.maxLatencyMs`). */
  private readonly maxLatencyMs = new Map<Uri, number>();

  constructor(
    private readonly socket: SocketLike,
    private readonly services: GatewayServices,
  ) {
    this.signedIn = services.access.initialPrincipal();
    services.metrics?.connections.inc();
    this.outbox = new Outbox(socket, (buffered) => {
      services.log.warn({ clientId: this.clientId, buffered }, "client is not reading; disconnecting");
      this.close(CLOSE_TRY_AGAIN_LATER, "too much unread output; reconnect");
      // The closing frame waits behind everything unread; a client that reads nothing would never see it.
      setTimeout(() => socket.terminate(), OVERFLOW_CLOSE_GRACE_MS).unref();
    });
  }

  /** Bytes sent to this connection that it has not taken yet. */
  get buffered(): number {
    return this.outbox.buffered;
  }

  deliver(envelope: ActionEnvelope, frame: string): void {
    if (this.closed) return;
    if (envelope.action.type === "terminal/data") {
      this.outbox.sendData(envelope as ActionEnvelope & { action: { type: "terminal/data"; data: string } }, frame, this.maxLatencyMs.get(envelope.channel) ?? 0);
    } else {
      this.outbox.send(frame);
    }
  }

  get principal(): Principal | undefined {
    return this.signedIn;
  }

  signIn(principal: Principal | undefined): void {
    this.signedIn = principal;
  }

  requireAccess(grant: Grant | undefined): void {
    const error = accessError(this.services.access, this.signedIn, grant);
    if (error) throw error;
  }

  accessRefusal(grant: Grant | undefined): string | undefined {
    return accessError(this.services.access, this.signedIn, grant)?.message;
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

  handshake(clientId: string, version: ProtocolVersion): void {
    this.clientId = clientId;
    this.negotiated = version;
    this.current = featuresOf(version);
    this.services.clients.remember(clientId, version);
  }

  closeAfterThisReply(code: number, reason: string): void {
    this.closeAfterReply = { code, reason };
  }

  /** Handles one inbound text frame. */
  receive(text: string): void {
    const message = parseMessage(text);
    if (message.kind === "invalid") return this.sendFrame(errorFrame(message.id, message.error));
    if (message.kind === "response") return;
    if (message.kind === "request" && message.method === "ping") return this.sendFrame(resultFrame(message.id, null));
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
    this.services.metrics?.connections.dec();
    this.services.store.channels.unsubscribeAll(this);
  }

  private async handleRequest(id: JsonRpcId, method: string, params: unknown): Promise<void> {
    const handler = Object.hasOwn(REQUEST_HANDLERS, method) ? REQUEST_HANDLERS[method] : undefined;
    const { metrics } = this.services;
    // Unknown methods are counted under one name, so clients cannot mint label values.
    const label = handler ? method : "unknown";
    const stopTimer = metrics?.requestSeconds.startTimer({ method: label });
    try {
      if (!handler) throw new JsonRpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
      if (!handler.beforeHandshake && !this.negotiated) throw new JsonRpcError(ErrorCode.InvalidRequest, `Send initialize (or reconnect) before ${method}`);
      this.sendFrame(resultFrame(id, await handler.run(params, this, this.services)));
      metrics?.requests.inc({ method: label, outcome: "ok" });
    } catch (err) {
      if (!(err instanceof JsonRpcError)) this.services.log.error({ err, method }, "unexpected error handling a request");
      const error = err instanceof JsonRpcError ? err : new JsonRpcError(ErrorCode.InternalError, "Internal error");
      metrics?.requests.inc({ method: label, outcome: String(error.code) });
      this.sendFrame(errorFrame(id, error));
    } finally {
      stopTimer?.();
    }
    if (this.closeAfterReply) this.close(this.closeAfterReply.code, this.closeAfterReply.reason);
  }

  private handleNotification(method: string, params: unknown): void {
    const handler = Object.hasOwn(NOTIFICATION_HANDLERS, method) ? NOTIFICATION_HANDLERS[method] : undefined;
    if (!handler || !this.negotiated) return;
    try {
      handler(params, this, this.services);
    } catch (err) {
      this.services.log.warn({ err, method }, "ignored a notification that could not be handled");
    }
  }
}
