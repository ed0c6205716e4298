import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { WriteStreamRequest } from "../../gen/terminal/v1/terminal_pb.js";
import { lengthDelimitedField, writeTagged } from "../../lib/protobuf-wire.js";

/** Bytes before each message of a gRPC stream: a flags byte (0: not compressed) and the message's length, 32 bits big-endian. */
export const GRPC_FRAME_HEADER_BYTES = 5;
/** The flags byte's bit of a compressed message. */
export const GRPC_COMPRESSED_FLAG = 0b1;

/**
 * Largest response message read: the runner's own limit on what it sends (a List of every terminal;
 * a Follow batch is at most 512 KiB and one event). Connect's transport reads up to 4 GiB.
 */
export const MAX_RESPONSE_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Writes one request message as a whole gRPC frame (header, then message). */
export type FrameWriter<T> = (message: T) => Uint8Array;

/** A frame writer through protobuf's own encoder, for messages that are rare (a stream's commands). */
export function encodedFrames<Desc extends DescMessage>(schema: Desc): FrameWriter<MessageShape<Desc>> {
  return (message) => {
    const bytes = toBinary(schema, message);
    const frame = Buffer.allocUnsafe(GRPC_FRAME_HEADER_BYTES + bytes.length);
    frame[0] = 0;
    frame.writeUInt32BE(bytes.length, 1);
    frame.set(bytes, GRPC_FRAME_HEADER_BYTES);
    return frame;
  };
}

/** Tags (field number and wire type) of WriteStreamRequest's fields. */
const ID_TAG = 0x0a; // id, length-delimited
const DATA_TAG = 0x12; // data, length-delimited
const EOF_TAG = 0x18; // eof, varint

/**
 * One WriteStream message as a gRPC frame, written by hand into one buffer sized up front: a
 * keystroke is one of these, and protobuf's reflective encoder and connect's envelope would each
 * allocate and copy it again. The message's bytes are those the encoder writes (tests compare them).
 */
export function writeStreamFrame({ id, data, eof }: WriteStreamRequest): Uint8Array {
  const idBytes = Buffer.byteLength(id);
  const message = lengthDelimitedField(idBytes) + lengthDelimitedField(data.length) + (eof ? 2 : 0);
  // Every byte is written below, so the buffer need not be zeroed first.
  const frame = Buffer.allocUnsafe(GRPC_FRAME_HEADER_BYTES + message);
  frame[0] = 0;
  frame.writeUInt32BE(message, 1);
  let at = GRPC_FRAME_HEADER_BYTES;
  if (idBytes !== 0) {
    at = writeTagged(frame, at, ID_TAG, idBytes);
    at += frame.write(id, at);
  }
  if (data.length !== 0) {
    at = writeTagged(frame, at, DATA_TAG, data.length);
    frame.set(data, at);
    at += data.length;
  }
  if (eof) writeTagged(frame, at, EOF_TAG, 1);
  return frame;
}

/**
 * Splits a gRPC body into its messages as its bytes arrive. The pieces of an unfinished frame are
 * kept apart and joined once, when it is complete: a 512 KiB Follow batch comes in dozens of HTTP/2
 * DATA frames, and joining at every piece would copy it dozens of times.
 */
export class FrameReader<O extends DescMessage> {
  private pieces: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly schema: O) {}

  /** Parses every frame `chunk` completes and hands each message on, in order. */
  read(chunk: Buffer, onMessage: (message: MessageShape<O>) => void): void {
    this.pieces.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes >= GRPC_FRAME_HEADER_BYTES) {
      // A header split across pieces is rare (and 5 bytes): join what there is.
      let first = this.pieces[0] as Buffer;
      if (first.length < GRPC_FRAME_HEADER_BYTES) this.pieces = [(first = Buffer.concat(this.pieces, this.bytes))];
      if (first.readUInt8(0) & GRPC_COMPRESSED_FLAG) throw new ConnectError("protocol error: the runner compressed a message, which was not asked for", Code.Internal);
      const length = first.readUInt32BE(1);
      if (length > MAX_RESPONSE_MESSAGE_BYTES) throw new ConnectError(`protocol error: a ${length}-byte message is larger than the ${MAX_RESPONSE_MESSAGE_BYTES} bytes read`, Code.ResourceExhausted);
      const end = GRPC_FRAME_HEADER_BYTES + length;
      if (this.bytes < end) return;
      const joined = this.pieces.length === 1 ? first : Buffer.concat(this.pieces, this.bytes);
      const rest = joined.subarray(end);
      this.pieces = rest.length > 0 ? [rest] : [];
      this.bytes = rest.length;
      onMessage(fromBinary(this.schema, joined.subarray(GRPC_FRAME_HEADER_BYTES, end)));
    }
  }

  /** Checks that the body did not end inside a frame. */
  finish(): void {
    if (this.bytes > 0) throw new ConnectError("protocol error: the runner's answer ends inside a message", Code.Internal);
  }
}
