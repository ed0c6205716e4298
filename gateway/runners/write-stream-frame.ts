import type { WriteStreamRequest } from "../../gen/terminal/v1/terminal_pb.js";
import { frameFor, GRPC_FRAME_HEADER_BYTES } from "../../lib/grpc-frames.js";
import { lengthDelimitedField, writeTagged } from "../../lib/protobuf-wire.js";

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
  const frame = frameFor(message);
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
