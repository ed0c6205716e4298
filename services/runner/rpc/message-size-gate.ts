import { Code, ConnectError } from "@connectrpc/connect";
import { GRPC_COMPRESSED_FLAG, GRPC_FRAME_HEADER_BYTES } from "../../../lib/grpc-frames.js";

/** gRPC-Web and Connect streams frame their messages as gRPC does: a flags byte, then a 32-bit length. */
const ENVELOPE_HEADER_BYTES = GRPC_FRAME_HEADER_BYTES;
/**
 * How much of a refused message is read and dropped before the refusal is sent. A refusal that
 * arrives while the caller still has megabytes of that message queued breaks Node's HTTP/2 client
 * for good (above its 10 MB session budget it resets every later response on the connection with
 * ENHANCE_YOUR_CALM), so the runner lets the rest arrive first. Past this, waiting costs more than the
 * caller's connection is worth, and the refusal is sent at once.
 */
export const MAX_DISCARDED_BYTES = 64 * 1024 * 1024;

/** What the gates do with each message that fits: check it (it arrives whole, in one piece). */
export type MessageCheck = (message: Uint8Array) => void;

/**
 * Passes a stream of enveloped messages (gRPC, gRPC-Web, Connect streaming) on as it arrives,
 * handing each complete message that fits in `maxBytes` to `check`. A message whose length prefix
 * is larger is never passed on nor kept: its bytes are read and dropped, then RESOURCE_EXHAUSTED is
 * thrown (at once when it is larger than MAX_DISCARDED_BYTES). What of a chunk goes on, goes on as
 * one piece (the chunk itself when all of it does, as a keystroke's WriteStream message does): each
 * piece is one more step through every stage of connect's stream. Nothing is copied but a message's
 * pieces, once, when it came in several, and a header that did.
 */
export async function* gateEnvelopes(body: AsyncIterable<Uint8Array>, maxBytes: number, check: MessageCheck): AsyncIterable<Uint8Array> {
  const header = new Uint8Array(ENVELOPE_HEADER_BYTES);
  let headerBytes = 0;
  let remaining = 0;
  let pieces: Uint8Array[] = [];
  let refusal: ConnectError | undefined;
  const finish = (message: Uint8Array[]): Uint8Array[] => {
    // The runner accepts no compression: a compressed message is left for the protocol layer to refuse.
    if ((header[0]! & GRPC_COMPRESSED_FLAG) === 0) check(joined(message));
    headerBytes = 0;
    return [];
  };
  for await (const chunk of body) {
    // What of this chunk goes on, once every message completed in it has passed its check: a header
    // begun in an earlier chunk (held back there), then chunk[from, to).
    let carried: Uint8Array | undefined;
    let from = 0;
    let to = 0;
    let at = 0;
    while (at < chunk.length && !(refusal && remaining > MAX_DISCARDED_BYTES)) {
      if (refusal) {
        const dropped = Math.min(remaining, chunk.length - at);
        at += dropped;
        remaining -= dropped;
        if (remaining === 0) break;
      } else if (headerBytes < ENVELOPE_HEADER_BYTES) {
        const begunEarlier = headerBytes > 0;
        const taken = Math.min(ENVELOPE_HEADER_BYTES - headerBytes, chunk.length - at);
        header.set(chunk.subarray(at, at + taken), headerBytes);
        headerBytes += taken;
        at += taken;
        if (headerBytes < ENVELOPE_HEADER_BYTES) continue;
        remaining = new DataView(header.buffer).getUint32(1);
        if (remaining > maxBytes) {
          refusal = oversized(maxBytes, remaining);
          continue;
        }
        if (begunEarlier) {
          carried = header.slice();
          from = at;
        }
        to = at;
        if (remaining === 0) finish([]);
      } else {
        const piece = chunk.subarray(at, at + remaining);
        at += piece.length;
        remaining -= piece.length;
        to = at;
        pieces.push(piece);
        if (remaining === 0) pieces = finish(pieces);
      }
    }
    if (carried) yield carried;
    if (to > from) yield from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to);
    if (refusal && (remaining === 0 || remaining > MAX_DISCARDED_BYTES)) throw refusal;
  }
  if (refusal) throw refusal;
  // A body that ends inside a header: connect reports the truncated envelope in its own words.
  if (remaining === 0 && headerBytes > 0) yield header.slice(0, headerBytes);
}

/**
 * Passes a unary body (one message, not enveloped) on as it arrives, and hands it whole to `check`
 * at its end. A body declared (`declaredBytes`, from Content-Length) or found to be larger than
 * `maxBytes` is not passed on nor kept: the rest is read and dropped, then RESOURCE_EXHAUSTED is
 * thrown (at once past MAX_DISCARDED_BYTES).
 */
export async function* gateWholeBody(body: AsyncIterable<Uint8Array>, maxBytes: number, declaredBytes: number | undefined, check: MessageCheck): AsyncIterable<Uint8Array> {
  // A refused body is read to its end only up to here; beyond it (or past a limit set higher) the refusal is sent at once.
  const readAtMost = Math.max(maxBytes, MAX_DISCARDED_BYTES);
  if (declaredBytes !== undefined && declaredBytes > readAtMost) throw oversized(maxBytes, declaredBytes);
  const pieces: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of body) {
    received += chunk.length;
    if (received > readAtMost) throw oversized(maxBytes, declaredBytes);
    if (received > maxBytes || (declaredBytes ?? 0) > maxBytes) continue;
    pieces.push(chunk);
    yield chunk;
  }
  if (received > maxBytes || (declaredBytes ?? 0) > maxBytes) throw oversized(maxBytes, declaredBytes ?? received);
  check(joined(pieces));
}

function oversized(maxBytes: number, bytes: number | undefined): ConnectError {
  const size = bytes === undefined ? "" : ` (${bytes} bytes)`;
  return new ConnectError(`the request message${size} is larger than the ${maxBytes} bytes the runner accepts (its --max-message-bytes)`, Code.ResourceExhausted);
}

function joined(pieces: Uint8Array[]): Uint8Array {
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
}
