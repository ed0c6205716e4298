import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { FollowEventSchema, FollowResponseSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { parseFollowResponse } from "../../../gateway/runners/follow-answers.js";

type EventInit = MessageInitShape<typeof FollowEventSchema>;

const output = (followId: number, offset: bigint, data: Uint8Array, endOffset: bigint): EventInit => ({
  followId,
  kind: { case: "event", value: { offset, event: { case: "output", value: { data, endOffset } } } },
});
const encoded = (...events: EventInit[]): Buffer => Buffer.from(toBinary(FollowResponseSchema, create(FollowResponseSchema, { events })));

/** Bytes of one FollowEvent as a response's field 1 (tag, length, event). */
function eventField(event: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([0x0a, event.length]), event]);
}

/** Parsed by hand and by protobuf: the same messages (or the same refusal). */
function expectSameAsProtobuf(bytes: Uint8Array): void {
  let expected: unknown;
  try {
    expected = fromBinary(FollowResponseSchema, bytes);
  } catch (err) {
    expect(() => parseFollowResponse(bytes)).toThrow((err as Error).message);
    return;
  }
  expect(parseFollowResponse(bytes)).toStrictEqual(expected);
}

describe("Follow answers read by hand", () => {
  const cases: Array<[string, Buffer]> = [
    ["a heartbeat (no events)", encoded()],
    ["one output", encoded(output(1, 0n, Buffer.from("$ "), 2n))],
    [
      "several follows' output beside a resize, an end and output of follow 0",
      encoded(
        output(3, 10n, Buffer.from("héllo"), 16n),
        { followId: 3, kind: { case: "event", value: { offset: 16n, event: { case: "resized", value: { cols: 100, rows: 30 } } } } },
        output(4, 2n ** 33n, Buffer.alloc(300, 0x62), 2n ** 33n + 300n),
        { followId: 4, kind: { case: "end", value: { code: 5, message: "no terminal t" } } },
        output(0, 0n, Buffer.from("x"), 0n),
      ),
    ],
    ["output whose bytes were all shell marks (no data)", encoded(output(2, 4_294_967_296n, new Uint8Array(0), 4_294_967_400n))],
    ["64 KiB of output, and offsets near 2^53", encoded(output(9, 2n ** 53n - 70_000n, Buffer.alloc(64 * 1024, 0x61), 2n ** 53n - 70_000n + 65_536n))],
    ["offsets past 2^53, which only a bigint holds", encoded(output(9, 2n ** 60n + 1n, Buffer.from("y"), 2n ** 60n + 2n))],
    ["the largest follow id", encoded(output(0xffff_ffff, 1n, Buffer.from("z"), 2n))],
  ];
  for (const [name, bytes] of cases) {
    it(`gives what protobuf's parser gives: ${name}`, () => expectSameAsProtobuf(bytes));
  }

  it("hands the output bytes on without copying them", () => {
    const bytes = encoded(output(1, 5n, Buffer.from("abc"), 8n));
    const value = parseFollowResponse(bytes).events[0]!.kind.value as { event: { value: { data: Uint8Array } } };
    expect(value.event.value.data.buffer).toBe(bytes.buffer);
  });

  it("leaves to protobuf what it does not expect: an unknown field, a field twice, output's fields in any order", () => {
    const one = Buffer.from(toBinary(FollowEventSchema, create(FollowEventSchema, output(1, 5n, Buffer.from("abc"), 8n))));
    const variants = [
      // An unknown varint field (15) at the end of the FollowEvent.
      eventField(Buffer.concat([one, Buffer.from([0x78, 0x01])])),
      // follow_id twice: the last one counts.
      eventField(Buffer.concat([Buffer.from([0x08, 0x07]), one])),
      // Output with end_offset before data, and data twice (protobuf keeps the last).
      eventField(Buffer.from([0x12, 0x0c, 0x08, 0x05, 0x12, 0x08, 0x10, 0x08, 0x0a, 0x01, 0x61, 0x0a, 0x01, 0x62])),
      // An unknown field in the response itself.
      Buffer.concat([eventField(one), Buffer.from([0x10, 0x01])]),
    ];
    for (const bytes of variants) expectSameAsProtobuf(bytes);
  });

  it("refuses a truncated answer as protobuf's parser does", () => {
    const bytes = encoded(output(1, 5n, Buffer.from("abcdef"), 11n), output(2, 0n, Buffer.from("gh"), 2n));
    for (const cut of [1, 2, 5, 9, bytes.length - 1]) expectSameAsProtobuf(bytes.subarray(0, cut));
  });
});
