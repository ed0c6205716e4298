import type { ServerResponse } from "node:http";
import type { Http2ServerResponse } from "node:http2";

/** Node's code for a write to a stream that is gone; connect reads it as a caller that hung up (Aborted). */
const STREAM_GONE = "ERR_STREAM_DESTROYED";

/**
 * Makes a write that waits for room fail once its response closes unfinished. connect waits for a
 * full stream's 'drain' or 'error', and a stream its caller reset (or whose connection dropped)
 * emits neither: the handler would stay parked at its `yield` for good, and whatever it holds (a
 * terminal's reader, a Follow's readers) would never be closed. The error it gets instead ends the
 * handler as a caller that went away.
 */
export function failWritesOnClose(response: ServerResponse | Http2ServerResponse): void {
  response.once("close", () => {
    if (response.writableFinished || response.listenerCount("error") === 0) return;
    const gone = Object.assign(new Error("the caller went away while a response waited for room"), { code: STREAM_GONE });
    response.emit("error", gone);
  });
}
