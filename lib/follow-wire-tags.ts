/**
 * Tags (field number and wire type) of the Follow answer's fields, as both services write and read
 * the output events by hand: the runner writes them, the gateway reads them. Tests compare both
 * with protobuf's own encoder and parser.
 */
export const FOLLOW_WIRE_TAGS = {
  /** FollowResponse.events, length-delimited. */
  events: 0x0a,
  /** FollowEvent.follow_id, varint. */
  followId: 0x08,
  /** FollowEvent.event (an AttachResponse), length-delimited. */
  event: 0x12,
  /** AttachResponse.offset, varint. */
  offset: 0x08,
  /** AttachResponse.output, length-delimited. */
  output: 0x12,
  /** Output.data, length-delimited. */
  data: 0x0a,
  /** Output.end_offset, varint. */
  endOffset: 0x10,
} as const;
