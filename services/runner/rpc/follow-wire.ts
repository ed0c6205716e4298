import { create, fromBinary, toBinary, type MessageInitShape, type UnknownField } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { FollowEventSchema, FollowResponseSchema, type FollowResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { FOLLOW_WIRE_TAGS } from "../../../lib/follow-wire-tags.js";
import { encodedFrames, frameFor, GRPC_FRAME_HEADER_BYTES } from "../../../lib/grpc-frames.js";
import { lengthDelimitedField, varintField, varintLength, writeTagged, writeVarint } from "../../../lib/protobuf-wire.js";
import { outputLength } from "../log/output-log.js";
import type { AttachEvent } from "../terminal/attach-stream.js";
import { attachResponseFrom } from "./attach-response-from.js";

/**
 * A FollowEvent as it goes into a FollowResponse: the value of the response's field 1, its length and
 * then its bytes. An output event, nearly every one, is kept as its parts until its frame is written,
 * so its bytes are copied once, straight into the frame: a buffer of their own in between cost an
 * allocation per event (a fresh pool page every other 4 KB chunk) and a second copy.
 */
export type WireFollowEvent = Uint8Array | WireOutput;

/** An output event's fields (its bytes as the log's buffers), and the sizes of the messages it nests. */
interface WireOutput {
  readonly followId: number;
  readonly offset: number;
  readonly parts: readonly Uint8Array[];
  readonly bytes: number;
  readonly end: number;
  /** Bytes of the FollowEvent, of its AttachResponse and of the AttachResponse's Output. */
  readonly follow: number;
  readonly attach: number;
  readonly output: number;
  /** Bytes of the field's value: the FollowEvent's length, then the FollowEvent. */
  readonly length: number;
}

const { followId: FOLLOW_ID_TAG, event: FOLLOW_EVENT_TAG, offset: OFFSET_TAG, output: OUTPUT_TAG, data: DATA_TAG, endOffset: END_OFFSET_TAG, events: EVENTS_TAG } = FOLLOW_WIRE_TAGS;

/**
 * One follow's event as the wire carries it. Output is written by hand, with the bytes protobuf's
 * encoder writes (tests compare them): its reflective encoder copies a message's bytes once per level
 * of nesting (the output bytes sit three deep), which was most of the runner's serialising cost.
 * Every other event goes through the encoder.
 */
export function wireFollowEvent(followId: number, attachEvent: AttachEvent): WireFollowEvent {
  const { offset, event } = attachEvent;
  if (event.kind !== "output") return wireMessage(followId, { case: "event", value: attachResponseFrom(attachEvent) });
  const { parts, end } = event;
  const bytes = outputLength(event);
  const output = lengthDelimitedField(bytes) + varintField(end);
  const attach = varintField(offset) + 1 + varintLength(output) + output;
  const follow = varintField(followId) + 1 + varintLength(attach) + attach;
  return { followId, offset, parts, bytes, end, follow, attach, output, length: varintLength(follow) + follow };
}

/** Writes a wire event at `at` (as many bytes as its `length`); returns where the next byte goes. */
function writeWireEvent(into: Uint8Array, at: number, wire: WireFollowEvent): number {
  if (wire instanceof Uint8Array) {
    into.set(wire, at);
    return at + wire.length;
  }
  const { followId, offset, parts, bytes, end } = wire;
  at = writeVarint(into, at, wire.follow);
  if (followId !== 0) at = writeTagged(into, at, FOLLOW_ID_TAG, followId);
  at = writeTagged(into, at, FOLLOW_EVENT_TAG, wire.attach);
  if (offset !== 0) at = writeTagged(into, at, OFFSET_TAG, offset);
  at = writeTagged(into, at, OUTPUT_TAG, wire.output);
  if (bytes !== 0) {
    at = writeTagged(into, at, DATA_TAG, bytes);
    for (const part of parts) {
      into.set(part, at);
      at += part.length;
    }
  }
  if (end !== 0) at = writeTagged(into, at, END_OFFSET_TAG, end);
  return at;
}

/** A wire event's bytes in a buffer of their own (what a response's unknown fields hold). */
export function wireFollowEventBytes(wire: WireFollowEvent): Uint8Array {
  if (wire instanceof Uint8Array) return wire;
  // Every byte is written, so the buffer need not be zeroed first.
  const bytes = Buffer.allocUnsafe(wire.length);
  writeWireEvent(bytes, 0, wire);
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
 * A FollowResponse whose events are wire events, for followResponseFrame to write as they are. Any
 * other encoder (gRPC-Web, Connect) reads `$unknown` and finds them there as field 1's values, which
 * protobuf writes out as they are and a reader decodes as the `events` they are; those are put
 * together only when asked for. The accessors are the class's, not each answer's: an answer with
 * accessors of its own held two closures, and under a flood the runner then faulted in fresh pages
 * for nearly twice as many bytes per MB of output (docs/benchmarks.md).
 */
class WireFollowResponse implements FollowResponse {
  readonly $typeName = FollowResponseSchema.typeName;
  events: FollowResponse["events"] = [];
  /** The wire events, until `$unknown` is set (then they are no longer what the response carries). */
  wire: readonly WireFollowEvent[] | undefined;
  private unknown: UnknownField[] | undefined;

  constructor(events: readonly WireFollowEvent[]) {
    this.wire = events;
  }

  get $unknown(): UnknownField[] | undefined {
    return (this.unknown ??= this.wire?.map((wire) => ({ no: 1, wireType: WireType.LengthDelimited, data: wireFollowEventBytes(wire) })));
  }

  set $unknown(value: UnknownField[] | undefined) {
    this.unknown = value;
    this.wire = undefined;
  }
}

/** A FollowResponse carrying `events` (see WireFollowResponse). */
export function followResponseOf(events: readonly WireFollowEvent[]): FollowResponse {
  return new WireFollowResponse(events);
}

/**
 * The same response with its events as protobuf's own messages: JSON has no place for bytes a
 * message does not know (the wire events ride there), so a caller speaking JSON gets these.
 */
export function withParsedEvents(response: FollowResponse): FollowResponse {
  return fromBinary(FollowResponseSchema, toBinary(FollowResponseSchema, response));
}

const encodedFollowResponses = encodedFrames(FollowResponseSchema);

/**
 * A FollowResponse as one gRPC frame. Made by followResponseOf, its events are written into a buffer
 * sized up front, each after its field's tag, an output's bytes copied once; protobuf's encoder and
 * connect's envelope would copy every output byte twice more. A response made any other way is encoded.
 */
export function followResponseFrame(response: FollowResponse): Uint8Array {
  const wire = response instanceof WireFollowResponse ? response.wire : undefined;
  if (!wire || response.events.length > 0) return encodedFollowResponses(response);
  let bytes = 0;
  for (const event of wire) bytes += 1 + event.length;
  const frame = frameFor(bytes);
  let at = GRPC_FRAME_HEADER_BYTES;
  for (const event of wire) {
    frame[at++] = EVENTS_TAG;
    at = writeWireEvent(frame, at, event);
  }
  return frame;
}
