import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { FollowEventSchema, FollowResponseSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { attachResponseFrom } from "../../../services/runner/rpc/attach-response-from.js";
import { followResponseFrame, followResponseOf, wireFollowEnd, wireFollowEvent, wireFollowEventBytes } from "../../../services/runner/rpc/follow-wire.js";
import { GRPC_FRAME_HEADER_BYTES } from "../../../lib/grpc-frames.js";
import type { AttachEvent } from "../../../services/runner/terminal/attach-stream.js";

/** What protobuf's own encoder writes for the event: its length, then its bytes. */
function encodedByProtobuf(followId: number, event: AttachEvent): Uint8Array {
  const message = toBinary(FollowEventSchema, create(FollowEventSchema, { followId, kind: { case: "event", value: attachResponseFrom(event) } }));
  const response = toBinary(FollowResponseSchema, create(FollowResponseSchema, { events: [fromBinary(FollowEventSchema, message)] }));
  // A response with one event is its tag (one byte) and that event's length and bytes.
  return response.subarray(1);
}

const output = (offset: number, data: Buffer, end: number): AttachEvent => ({ offset, event: { kind: "output", parts: [data], end } });

describe("Follow events on the wire", () => {
  const cases: Array<[string, number, AttachEvent]> = [
    ["first bytes of a terminal", 1, output(0, Buffer.from("$ "), 2)],
    ["a UTF-8 character cut at the end", 7, output(100, Buffer.from("abc€").subarray(0, 5), 105)],
    ["offsets past 2^32 and 2^50", 300, output(2 ** 50 + 3, Buffer.from("x"), 2 ** 50 + 4)],
    ["output whose bytes were all shell marks", 2, output(4_294_967_296, Buffer.alloc(0), 4_294_967_400)],
    ["64 KiB, whose lengths take three varint bytes", 128, output(70_000, Buffer.alloc(64 * 1024, 0x61), 70_000 + 64 * 1024)],
    ["follow 0, offset 0, end 0", 0, output(0, Buffer.from("a"), 0)],
    ["output read from three appends, one of them empty", 5, { offset: 40, event: { kind: "output", parts: [Buffer.from("ab"), Buffer.alloc(0), Buffer.from("c€")], end: 46 } }],
    ["64 KiB from sixteen appends", 6, { offset: 1, event: { kind: "output", parts: Array.from({ length: 16 }, (_, i) => Buffer.alloc(4096, 0x61 + i)), end: 1 + 64 * 1024 } }],
    ["a resize", 9, { offset: 12, event: { kind: "resized", cols: 120, rows: 40 } }],
  ];
  for (const [name, followId, event] of cases) {
    it(`writes the bytes protobuf writes: ${name}`, () => {
      expect(Buffer.from(wireFollowEventBytes(wireFollowEvent(followId, event)))).toEqual(Buffer.from(encodedByProtobuf(followId, event)));
    });
  }

  it("puts events in a response that reads back as those events, in order, beside an end", () => {
    const events = [wireFollowEvent(3, output(0, Buffer.from("héllo"), 6)), wireFollowEnd(3, 5, "no terminal t"), wireFollowEvent(4, output(9, Buffer.from("x"), 10))];
    const decoded = fromBinary(FollowResponseSchema, toBinary(FollowResponseSchema, followResponseOf(events)));
    expect(decoded.$unknown ?? []).toEqual([]);
    expect(decoded.events.map(({ followId, kind }) => [followId, kind.case])).toEqual([
      [3, "event"],
      [3, "end"],
      [4, "event"],
    ]);
    const first = decoded.events[0]!.kind.value as { event: { case: string; value: { data: Uint8Array; endOffset: bigint } } };
    expect(Buffer.from(first.event.value.data).toString()).toBe("héllo");
    expect(first.event.value.endOffset).toBe(6n);
    expect(decoded.events[1]!.kind.value).toMatchObject({ code: 5, message: "no terminal t" });
  });

  it("frames a response as gRPC carries it, with the bytes protobuf's encoder writes, whether made of wire events or not", () => {
    const events = [wireFollowEvent(3, output(0, Buffer.from("héllo"), 6)), wireFollowEnd(3, 5, "no terminal t"), wireFollowEvent(4, output(9, Buffer.alloc(300, 0x62), 309))];
    const cases = [
      followResponseOf(events),
      followResponseOf([]),
      create(FollowResponseSchema, { events: [create(FollowEventSchema, { followId: 8, kind: { case: "end", value: { code: 0, message: "" } } })] }),
    ];
    for (const response of cases) {
      const expected = toBinary(FollowResponseSchema, response);
      const frame = Buffer.from(followResponseFrame(response));
      expect(frame[0]).toBe(0);
      expect(frame.readUInt32BE(1)).toBe(expected.length);
      expect(frame.subarray(GRPC_FRAME_HEADER_BYTES)).toEqual(Buffer.from(expected));
    }
  });

  it("counts each event as the bytes it takes in the frame, and lets a response's events be replaced as any unknown fields can", () => {
    const events = [wireFollowEvent(3, output(2 ** 40, Buffer.alloc(5000, 0x63), 2 ** 40 + 5000)), wireFollowEnd(3, 0), wireFollowEvent(0, output(0, Buffer.alloc(0), 7))];
    for (const event of events) expect(wireFollowEventBytes(event).length).toBe(event.length);
    const response = followResponseOf(events);
    expect(followResponseFrame(response).length).toBe(GRPC_FRAME_HEADER_BYTES + events.reduce((sum, event) => sum + 1 + event.length, 0));
    response.$unknown = [];
    expect(Buffer.from(followResponseFrame(response))).toEqual(Buffer.from([0, 0, 0, 0, 0]));
    expect(toBinary(FollowResponseSchema, response).length).toBe(0);
  });
});
