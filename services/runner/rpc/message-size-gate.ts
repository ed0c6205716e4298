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
  const gate = new EnvelopeGate(maxBytes, check);
  for await (const chunk of body) {
    yield* gate.take(chunk);
    if (gate.refusal) throw gate.refusal;
  }
  yield* gate.finish();
  if (gate.refusal) throw gate.refusal;
}

/**
 * gateEnvelopes' rule for a body whose chunks are pushed to it (the runner's direct calls read
 * their request as it arrives): `take` each chunk and pass on what it returns, then `finish` at the
 * body's end; once `refusal` is set, the call is refused with it and nothing more is taken.
 */
export class EnvelopeGate {
  /** RESOURCE_EXHAUSTED, set once an oversized message has been read and dropped as far as it will be. */
  refusal: ConnectError | undefined;
  private readonly header = new Uint8Array(ENVELOPE_HEADER_BYTES);
  private headerBytes = 0;
  private remaining = 0;
  private pieces: Uint8Array[] = [];
  /** The oversized message being dropped, before its refusal is due. */
  private dropping: ConnectError | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly check: MessageCheck,
  ) {}

  /** What of `chunk` goes on, once every message completed in it has passed its check. */
  take(chunk: Uint8Array): Uint8Array[] {
    // A header begun in an earlier chunk (held back there), then chunk[from, to).
    let carried: Uint8Array | undefined;
    let from = 0;
    let to = 0;
    let at = 0;
    while (at < chunk.length && !(this.dropping && this.remaining > MAX_DISCARDED_BYTES)) {
      if (this.dropping) {
        const dropped = Math.min(this.remaining, chunk.length - at);
        at += dropped;
        this.remaining -= dropped;
        if (this.remaining === 0) break;
      } else if (this.headerBytes < ENVELOPE_HEADER_BYTES) {
        const begunEarlier = this.headerBytes > 0;
        const taken = Math.min(ENVELOPE_HEADER_BYTES - this.headerBytes, chunk.length - at);
        this.header.set(chunk.subarray(at, at + taken), this.headerBytes);
        this.headerBytes += taken;
        at += taken;
        if (this.headerBytes < ENVELOPE_HEADER_BYTES) continue;
        this.remaining = new DataView(this.header.buffer).getUint32(1);
        if (this.remaining > this.maxBytes) {
          this.dropping = oversized(this.maxBytes, this.remaining);
          continue;
        }
        if (begunEarlier) {
          carried = this.header.slice();
          from = at;
        }
        to = at;
        if (this.remaining === 0) this.finishMessage([]);
      } else {
        const piece = chunk.subarray(at, at + this.remaining);
        at += piece.length;
        this.remaining -= piece.length;
        to = at;
        this.pieces.push(piece);
        if (this.remaining === 0) this.pieces = this.finishMessage(this.pieces);
      }
    }
    const passed: Uint8Array[] = [];
    if (carried) passed.push(carried);
    if (to > from) passed.push(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to));
    if (this.dropping && (this.remaining === 0 || this.remaining > MAX_DISCARDED_BYTES)) this.refusal = this.dropping;
    return passed;
  }

  /** What goes on at the body's end: a header the body ended inside (the protocol layer reports the truncated envelope in its own words). */
  finish(): Uint8Array[] {
    if (this.dropping) {
      this.refusal = this.dropping;
      return [];
    }
    return this.remaining === 0 && this.headerBytes > 0 ? [this.header.slice(0, this.headerBytes)] : [];
  }

  private finishMessage(message: Uint8Array[]): Uint8Array[] {
    // The runner accepts no compression: a compressed message is left for the protocol layer to refuse.
    if ((this.header[0]! & GRPC_COMPRESSED_FLAG) === 0) this.check(joined(message));
    this.headerBytes = 0;
    return [];
  }
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
