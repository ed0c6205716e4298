import type http2 from "node:http2";

/** How long an HTTP/2 connection may take to start, and stay without a call. */
export interface SessionTimeouts {
  /** From the session's start until the client's SETTINGS frame (the end of its connection preface). */
  handshakeTimeoutMs: number;
  /** With no stream open; 0: never. */
  idleTimeoutMs: number;
}

/** What the runner tells a watched session about it. */
export interface SessionWatch {
  /** The session carried a call with the runner's token: from now on its PINGs keep it open. */
  authenticated(): void;
}

/**
 * Destroys an HTTP/2 session whose client does not finish its preface (SETTINGS) in time, and closes
 * (GOAWAY with NO_ERROR, then the socket) one that has no stream open for `idleTimeoutMs`. PINGs keep
 * a session open once it has carried a call with the runner's token: a gateway pings the one
 * connection it keeps to each runner, and its terminals' Attach streams may be quiet for hours.
 * A connection that only pings, or only makes calls without the token, is closed like any idle one.
 *
 * The GOAWAY is sent once, naming the last stream taken: nghttp2 stops reading a session that has
 * sent GOAWAY and has no stream open, so gRPC's two-step GOAWAY (a first one that refuses nothing,
 * a PING, then the final one) would leave the PING unanswered here. A client that pings is never
 * idle, so the only calls this can refuse (as REFUSED_STREAM, safe to retry) are those of a client
 * that sent one at the very moment its connection reached the idle timeout.
 */
export function watchSession(session: http2.ServerHttp2Session, timeouts: SessionTimeouts): SessionWatch {
  const handshake = setTimeout(() => session.destroy(), timeouts.handshakeTimeoutMs);
  session.once("remoteSettings", () => clearTimeout(handshake));
  let open = 0;
  let trusted = false;
  let idle: NodeJS.Timeout | undefined;
  const rearm = (): void => {
    clearTimeout(idle);
    if (open === 0 && timeouts.idleTimeoutMs > 0 && !session.closed && !session.destroyed) idle = setTimeout(() => session.destroy(), timeouts.idleTimeoutMs);
  };
  session.on("stream", (stream: http2.ServerHttp2Stream) => {
    open++;
    rearm();
    stream.once("close", () => {
      open--;
      rearm();
    });
  });
  session.on("ping", () => trusted && rearm());
  session.once("close", () => {
    clearTimeout(handshake);
    clearTimeout(idle);
  });
  rearm();
  return { authenticated: () => void (trusted = true) };
}
