import { ErrorCode, errorCodeName, OK_CODE_NAME } from "../../ahp/error-codes.js";
import { errorFrame, parseMessage, resultFrame, type JsonRpcId } from "../../ahp/json-rpc.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { principalId } from "../auth/access.js";
import type { GatewayServices, HandlerTables, Session } from "../handlers/session.js";
import { endRequestSpan, inRequestSpan, startRequestSpan } from "./request-span.js";

/** Delivery controls a client sends outside the request order (flow control must not wait behind a slow request). */
const DELIVERY_METHODS: ReadonlySet<string> = new Set(["channel/frame", "channel/credit", "channel/reset"]);

/** The connection as request dispatch sees it: the session handlers get, and the socket's side of replies and delivery controls. */
export interface DispatchedSession extends Session {
  /** True once the socket is closed or being closed. */
  readonly isClosed: boolean;
  close(code: number, reason: string): void;
  /** A delivery control from the client (credit, a frame, a reset), `frameChars` long. */
  deliveryControl(method: string, params: unknown, frameChars: number): void;
}

/**
 * One connection's inbound messages, in arrival order (so `createTerminal` then `subscribe` works
 * even pipelined), each handled by the handler its method names; except `ping`, answered at once
 * (before a handshake too), and delivery controls, which windowed delivery takes as they come.
 * A reply's follow-ups (a window's first frames, a close after a failed handshake) run right after it.
 */
export class RequestDispatch {
  private pending: Promise<void> = Promise.resolve();
  private closeAfterReply: { code: number; reason: string } | undefined;
  private afterReply: Array<() => void> = [];

  constructor(
    private readonly session: DispatchedSession,
    private readonly handlers: HandlerTables,
    private readonly services: GatewayServices,
  ) {}

  /** Handles one inbound text frame. */
  receive(text: string): void {
    const message = parseMessage(text);
    const { session } = this;
    if (message.kind === "invalid") return session.sendFrame(errorFrame(message.id, message.error));
    // The gateway sends no requests, so a response answers nothing.
    if (message.kind === "result" || message.kind === "error") return;
    if (message.kind === "request" && message.method === "ping") return session.sendFrame(resultFrame(message.id, null));
    if (message.kind === "notification" && DELIVERY_METHODS.has(message.method)) {
      if (session.version) session.deliveryControl(message.method, message.params, text.length);
      return;
    }
    this.pending = this.pending.then(() =>
      message.kind === "request" ? this.handleRequest(message.id, message.method, message.params) : this.handleNotification(message.method, message.params),
    );
  }

  /** A notification the client framed on a windowed channel, handled in order with the rest; `done` once it was. */
  receiveFramed(message: Record<string, unknown>, done: () => void): void {
    this.pending = this.pending.then(() => {
      this.handleNotification(message.method as string, message.params);
      done();
    });
  }

  /** Closes the socket once the reply being prepared has been sent. */
  closeAfterThisReply(code: number, reason: string): void {
    this.closeAfterReply = { code, reason };
  }

  /** Runs `step` right after the reply being prepared was sent. */
  afterThisReply(step: () => void): void {
    this.afterReply.push(step);
  }

  private async handleRequest(id: JsonRpcId, method: string, params: unknown): Promise<void> {
    const { session, services } = this;
    // A connection being closed (a failed handshake) runs nothing more, not even what it sent before the close.
    if (session.isClosed) return;
    const { requests } = this.handlers;
    const handler = Object.hasOwn(requests, method) ? requests[method] : undefined;
    const { metrics } = services;
    // Unknown methods are counted under one name, so clients cannot mint label values.
    const label = handler ? method : "unknown";
    const stopTimer = metrics?.requestSeconds.startTimer({ method: label });
    const span = startRequestSpan(label, id);
    let failure: JsonRpcError | undefined;
    try {
      if (!handler) throw new JsonRpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
      if (!handler.beforeHandshake && !session.version) throw new JsonRpcError(ErrorCode.InvalidRequest, `Send initialize (or reconnect) before ${method}`);
      session.sendFrame(resultFrame(id, await inRequestSpan(span, () => handler.run(params, session, services))));
      metrics?.requests.inc({ method: label, code: OK_CODE_NAME });
    } catch (err) {
      if (!(err instanceof JsonRpcError)) services.log.error({ err, method }, "unexpected error handling a request");
      const error = err instanceof JsonRpcError ? err : new JsonRpcError(ErrorCode.InternalError, "Internal error");
      failure = error;
      metrics?.requests.inc({ method: label, code: errorCodeName(error.code) });
      logRefusal(services, session, method, error);
      this.afterReply = [];
      session.sendFrame(errorFrame(id, error));
    } finally {
      stopTimer?.();
      endRequestSpan(span, failure);
    }
    for (const step of this.afterReply.splice(0)) step();
    if (this.closeAfterReply) session.close(this.closeAfterReply.code, this.closeAfterReply.reason);
  }

  private handleNotification(method: string, params: unknown): void {
    const { notifications } = this.handlers;
    const handler = Object.hasOwn(notifications, method) ? notifications[method] : undefined;
    if (!handler || !this.session.version || this.session.isClosed) return;
    try {
      handler(params, this.session, this.services);
    } catch (err) {
      this.services.log.warn({ err, method }, "ignored a notification that could not be handled");
    }
  }
}

/**
 * A refusal an operator may need to see, at warn with the peer's address (rate limited): a sign-in
 * with a secret no user has, and a request the connection's person may not make. A request before
 * any sign-in (-32007 elsewhere) is how clients learn they must sign in: not logged.
 */
function logRefusal({ refusals }: GatewayServices, session: Session, method: string, error: JsonRpcError): void {
  const fields = { address: session.address, clientId: session.clientId, method, reason: error.message };
  if (error.code === ErrorCode.AuthRequired && method === "authenticate") refusals.warn("sign-in", fields, "refused a sign-in: no user has that secret");
  else if (error.code === ErrorCode.PermissionDenied) refusals.warn("permission", { ...fields, user: session.principal && principalId(session.principal) }, "refused a request the connection may not make");
}
