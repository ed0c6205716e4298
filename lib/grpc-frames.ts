import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";

/**
 * gRPC's length-prefixed messages ("frames") as both services write and read them on their hot
 * streams, without connect's per-message stages. Compression is never negotiated on those streams.
 */

/** Bytes before each message of a gRPC stream: a flags byte (0: not compressed) and the message's length, 32 bits big-endian. */
export const GRPC_FRAME_HEADER_BYTES = 5;
/** The flags byte's bit of a compressed message. */
export const GRPC_COMPRESSED_FLAG = 0b1;

/** Writes one message as a whole gRPC frame (header, then message). */
export type FrameWriter<T> = (message: T) => Uint8Array;

/** A buffer for a frame of a `messageBytes`-byte message, its header written: the message goes at GRPC_FRAME_HEADER_BYTES. */
export function frameFor(messageBytes: number): Buffer {
  // Every byte is written by the caller, so the buffer need not be zeroed first.
  const frame = Buffer.allocUnsafe(GRPC_FRAME_HEADER_BYTES + messageBytes);
  frame[0] = 0;
  frame.writeUInt32BE(messageBytes, 1);
  return frame;
}

/** Reads one message from its bytes (a frame's, its header left out). */
export type MessageParser<T> = (bytes: Uint8Array) => T;

/** A frame writer through protobuf's own encoder, for messages that are rare (a stream's commands, its one answer). */
export function encodedFrames<Desc extends DescMessage>(schema: Desc): FrameWriter<MessageShape<Desc>> {
  return (message) => {
    const bytes = toBinary(schema, message);
    const frame = frameFor(bytes.length);
    frame.set(bytes, GRPC_FRAME_HEADER_BYTES);
    return frame;
  };
}

/**
 * Splits a gRPC body into its messages as its bytes arrive. The pieces of an unfinished frame are
 * kept apart and joined once, when it is complete: a 512 KiB Follow batch comes in dozens of HTTP/2
 * DATA frames, and joining at every piece would copy it dozens of times.
 */
export class FrameReader<O extends DescMessage> {
  private pieces: Buffer[] = [];
  private bytes = 0;

  /** Reads messages of `schema` (with `parse` when given, protobuf's parser otherwise); a frame announcing more than `maxBytes` is RESOURCE_EXHAUSTED. */
  constructor(
    schema: O,
    private readonly maxBytes: number,
    private readonly parse: MessageParser<MessageShape<O>> = (bytes) => fromBinary(schema, bytes),
  ) {}

  /** Parses every frame `chunk` completes and hands each message on, in order. */
  read(bytes: Uint8Array, onMessage: (message: MessageShape<O>) => void): void {
    const chunk = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    this.pieces.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes >= GRPC_FRAME_HEADER_BYTES) {
      // A header split across pieces is rare (and 5 bytes): join what there is.
      let first = this.pieces[0] as Buffer;
      if (first.length < GRPC_FRAME_HEADER_BYTES) this.pieces = [(first = Buffer.concat(this.pieces, this.bytes))];
      if (first.readUInt8(0) & GRPC_COMPRESSED_FLAG) throw new ConnectError("protocol error: a compressed message, though no compression was agreed", Code.Internal);
      const length = first.readUInt32BE(1);
      if (length > this.maxBytes) throw new ConnectError(`protocol error: a ${length}-byte message is larger than the ${this.maxBytes} bytes read`, Code.ResourceExhausted);
      const end = GRPC_FRAME_HEADER_BYTES + length;
      if (this.bytes < end) return;
      const joined = this.pieces.length === 1 ? first : Buffer.concat(this.pieces, this.bytes);
      const rest = joined.subarray(end);
      this.pieces = rest.length > 0 ? [rest] : [];
      this.bytes = rest.length;
      onMessage(this.parse(joined.subarray(GRPC_FRAME_HEADER_BYTES, end)));
    }
  }

  /** Checks that the body did not end inside a frame. */
  finish(): void {
    if (this.bytes > 0) throw new ConnectError("protocol error: the stream ends inside a message", Code.Internal);
  }
}
