import { fromBinary } from "@bufbuild/protobuf";
import { AttachResponseSchema, FollowEventSchema, FollowResponseSchema, OutputSchema, type FollowEvent, type FollowResponse } from "../../gen/terminal/v1/terminal_pb.js";
import { FOLLOW_WIRE_TAGS } from "../../lib/follow-wire-tags.js";
import { readVarint, type WireCursor } from "../../lib/protobuf-wire.js";

const { events: EVENTS_TAG, followId: FOLLOW_ID_TAG, event: EVENT_TAG, offset: OFFSET_TAG, output: OUTPUT_TAG, data: DATA_TAG, endOffset: END_OFFSET_TAG } = FOLLOW_WIRE_TAGS;
/** Largest follow_id (a uint32). */
const MAX_FOLLOW_ID = 0xffff_ffff;

/**
 * A Follow answer read off the wire, with the messages protobuf's parser makes (tests compare them).
 * Output events, nearly all of every answer, are read by hand: the reflective parser builds each
 * message field by field through its descriptors, and with a hundred busy terminals that was most of
 * what reading the runner cost the gateway. Any other event, and an output event with anything this
 * reader does not expect (another field, a nested message twice, an offset past 2^53), is left to the parser;
 * so is an answer with anything but events.
 */
export function parseFollowResponse(bytes: Uint8Array): FollowResponse {
  const events: FollowEvent[] = [];
  const cursor: WireCursor = { at: 0 };
  while (cursor.at < bytes.length) {
    if (bytes[cursor.at++] !== EVENTS_TAG) return fromBinary(FollowResponseSchema, bytes);
    const length = readVarint(bytes, cursor, bytes.length);
    const start = cursor.at;
    const end = start + length;
    if (!(end <= bytes.length)) return fromBinary(FollowResponseSchema, bytes);
    events.push(outputEvent(bytes, cursor, end) ?? fromBinary(FollowEventSchema, bytes.subarray(start, end)));
    cursor.at = end;
  }
  return { $typeName: FollowResponseSchema.typeName, events };
}

/** The FollowEvent in `bytes` from `cursor.at` to `end` when it is one follow's output and nothing else; undefined otherwise. */
function outputEvent(bytes: Uint8Array, cursor: WireCursor, end: number): FollowEvent | undefined {
  let followId = 0;
  let attach: { start: number; end: number } | undefined;
  while (cursor.at < end) {
    const tag = bytes[cursor.at++];
    if (tag === FOLLOW_ID_TAG) {
      followId = readVarint(bytes, cursor, end);
      if (!(followId <= MAX_FOLLOW_ID)) return undefined;
    } else if (tag === EVENT_TAG && !attach) {
      attach = lengthDelimited(bytes, cursor, end);
      if (!attach) return undefined;
    } else {
      return undefined;
    }
  }
  if (!attach) return undefined;
  cursor.at = attach.start;
  let offset = 0;
  let output: { start: number; end: number } | undefined;
  while (cursor.at < attach.end) {
    const tag = bytes[cursor.at++];
    if (tag === OFFSET_TAG) {
      offset = readVarint(bytes, cursor, attach.end);
      if (Number.isNaN(offset)) return undefined;
    } else if (tag === OUTPUT_TAG && !output) {
      output = lengthDelimited(bytes, cursor, attach.end);
      if (!output) return undefined;
    } else {
      return undefined;
    }
  }
  if (!output) return undefined;
  cursor.at = output.start;
  let data: Uint8Array | undefined;
  let endOffset = 0;
  while (cursor.at < output.end) {
    const tag = bytes[cursor.at++];
    if (tag === DATA_TAG && !data) {
      const range = lengthDelimited(bytes, cursor, output.end);
      if (!range) return undefined;
      data = bytes.subarray(range.start, range.end);
    } else if (tag === END_OFFSET_TAG) {
      endOffset = readVarint(bytes, cursor, output.end);
      if (Number.isNaN(endOffset)) return undefined;
    } else {
      return undefined;
    }
  }
  return {
    $typeName: FollowEventSchema.typeName,
    followId,
    kind: {
      case: "event",
      value: {
        $typeName: AttachResponseSchema.typeName,
        offset: BigInt(offset),
        event: { case: "output", value: { $typeName: OutputSchema.typeName, data: data ?? new Uint8Array(0), endOffset: BigInt(endOffset) } },
      },
    },
  };
}

/** The range of the length-delimited value at `cursor.at`, the cursor moved past it; undefined when it runs past `end`. */
function lengthDelimited(bytes: Uint8Array, cursor: WireCursor, end: number): { start: number; end: number } | undefined {
  const length = readVarint(bytes, cursor, end);
  const start = cursor.at;
  if (!(start + length <= end)) return undefined;
  cursor.at = start + length;
  return { start, end: start + length };
}
