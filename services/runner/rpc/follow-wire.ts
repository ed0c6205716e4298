import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { FollowEventSchema, FollowResponseSchema, type FollowResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { encodedFrames, frameFor, GRPC_FRAME_HEADER_BYTES } from "../../../lib/grpc-frames.js";
import { lengthDelimitedField, varintField, varintLength, writeTagged, writeVarint } from "../../../lib/protobuf-wire.js";
import type { AttachEvent } from "../terminal/attach-stream.js";
import { attachResponseFrom } from "./attach-response-from.js";

/** A FollowEvent as it goes into a FollowResponse: the value of the response's field 1, its length and then its bytes. */
export type WireFollowEvent = Uint8Array;

/** Tags (field number and wire type) of the fields an output event is made of. */
const FOLLOW_ID_TAG = 0x08; // FollowEvent.follow_id, varint
const FOLLOW_EVENT_TAG = 0x12; // FollowEvent.event, length-delimited
const OFFSET_TAG = 0x08; // AttachResponse.offset, varint
const OUTPUT_TAG = 0x12; // AttachResponse.output, length-delimited
const DATA_TAG = 0x0a; // Output.data, length-delimited
const END_OFFSET_TAG = 0x10; // Output.end_offset, varint

/**
 * One follow's event as the wire carries it. Output, nearly every event, is written by hand into one
 * buffer sized up front: protobuf's reflective encoder copies a message's bytes once per level of
 * nesting (the output bytes sit three deep), which was most of the runner's serialising cost. The
 * bytes are those the encoder writes (tests compare them); every other event goes through it.
 */
export function wireFollowEvent(followId: number, attachEvent: AttachEvent): WireFollowEvent {
  const { offset, event } = attachEvent;
  if (event.kind !== "output") return wireMessage(followId, { case: "event", value: attachResponseFrom(attachEvent) });
  const { data, end } = event;
  const output = lengthDelimitedField(data.length) + varintField(end);
  const attach = varintField(offset) + 1 + varintLength(output) + output;
  const follow = varintField(followId) + 1 + varintLength(attach) + attach;
  // Every byte is written below, so the buffer need not be zeroed first.
  const bytes = Buffer.allocUnsafe(varintLength(follow) + follow);
  let at = writeVarint(bytes, 0, follow);
  if (followId !== 0) at = writeTagged(bytes, at, FOLLOW_ID_TAG, followId);
  at = writeTagged(bytes, at, FOLLOW_EVENT_TAG, attach);
  if (offset !== 0) at = writeTagged(bytes, at, OFFSET_TAG, offset);
  at = writeTagged(bytes, at, OUTPUT_TAG, output);
  if (data.length !== 0) {
    at = writeTagged(bytes, at, DATA_TAG, data.length);
    bytes.set(data, at);
    at += data.length;
  }
  if (end !== 0) writeTagged(bytes, at, END_OFFSET_TAG, end);
  return bytes;
}

/** A follow's end as the wire carries it: a gRPC code (0 when it ended as Attach ends normally) and a message. */
export function wireFollowEnd(followId: number, code: number, message = ""): WireFollowEvent {
  return wireMessage(followId, { case: "end", value: { code, message } });
}

function wireMessage(followId: number, kind: MessageInitShape<typeof FollowEventSchema>["kind"]): WireFollowEvent {
  const message = toBinary(FollowEventSchema, create(FollowEventSchema, { followId, kind }));
  const bytes = new Uint8Array(varintLength(message.length) + message.length);
  bytes.set(message, writeVarint(bytes, 0, message.length));
  return bytes;
}

/**
 * A FollowResponse carrying `events`: as field 1's wire values, which protobuf writes out as they
 * are (unknown fields are kept), so the message is serialised without walking the events again.
 * A reader decodes them as the `events` they are.
 */
export function followResponseOf(events: readonly WireFollowEvent[]): FollowResponse {
  const response = create(FollowResponseSchema);
  response.$unknown = events.map((data) => ({ no: 1, wireType: WireType.LengthDelimited, data }));
  return response;
}

/**
 * The same response with its events as protobuf's own messages: JSON has no place for bytes a
 * message does not know (the wire events ride there), so a caller speaking JSON gets these.
 */
export function withParsedEvents(response: FollowResponse): FollowResponse {
  return fromBinary(FollowResponseSchema, toBinary(FollowResponseSchema, response));
}

/** The tag of FollowResponse.events (field 1, length-delimited), which each wire event follows. */
const EVENTS_TAG = 0x0a;
const encodedFollowResponses = encodedFrames(FollowResponseSchema);

/**
 * A FollowResponse as one gRPC frame. Its events were written as the wire carries them (followResponseOf),
 * so each is copied once, after its field's tag, into a buffer sized up front; protobuf's encoder and
 * connect's envelope would copy every output byte twice more. A response made any other way is encoded.
 */
export function followResponseFrame(response: FollowResponse): Uint8Array {
  const wire = response.$unknown;
  if (response.events.length > 0 || !wire?.every(({ no, wireType }) => no === 1 && wireType === WireType.LengthDelimited)) return encodedFollowResponses(response);
  let bytes = 0;
  for (const { data } of wire) bytes += 1 + data.length;
  const frame = frameFor(bytes);
  let at = GRPC_FRAME_HEADER_BYTES;
  for (const { data } of wire) {
    frame[at++] = EVENTS_TAG;
    frame.set(data, at);
    at += data.length;
  }
  return frame;
}
