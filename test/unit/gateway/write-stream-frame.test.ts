import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { WriteStreamRequestSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { writeStreamFrame } from "../../../gateway/runners/write-stream-frame.js";
import { GRPC_FRAME_HEADER_BYTES } from "../../../lib/grpc-frames.js";

const CASES: Record<string, { id: string; data: Uint8Array; eof?: boolean }> = {
  "a keystroke": { id: "t-1", data: Buffer.from("a") },
  "an empty write": { id: "t-1", data: new Uint8Array(0) },
  "end of input with the last bytes": { id: "t-1", data: Buffer.from("last"), eof: true },
  "end of input alone": { id: "t-1", data: new Uint8Array(0), eof: true },
  "no id": { id: "", data: Buffer.from("x") },
  "an id of several-byte characters": { id: "tërminal-ü-€", data: Buffer.from("é") },
  "a paste whose length takes three varint bytes": { id: "t-1", data: Buffer.alloc(70_000, 0x61) },
};

describe("a WriteStream message written by hand as a gRPC frame", () => {
  it.each(Object.entries(CASES))("for %s, carries the bytes protobuf's encoder writes, after an uncompressed header with their length", (_, init) => {
    const expected = toBinary(WriteStreamRequestSchema, create(WriteStreamRequestSchema, init));
    const frame = writeStreamFrame(create(WriteStreamRequestSchema, init));
    expect(frame[0]).toBe(0);
    expect(Buffer.from(frame).readUInt32BE(1)).toBe(expected.length);
    expect(Buffer.from(frame.subarray(GRPC_FRAME_HEADER_BYTES))).toEqual(Buffer.from(expected));
    expect(fromBinary(WriteStreamRequestSchema, frame.subarray(GRPC_FRAME_HEADER_BYTES))).toMatchObject({ id: init.id, eof: init.eof ?? false });
  });
});
