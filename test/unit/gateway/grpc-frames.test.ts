import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { WriteStreamRequestSchema, WriteStreamResponseSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { FrameReader, GRPC_FRAME_HEADER_BYTES, MAX_RESPONSE_MESSAGE_BYTES, writeStreamFrame } from "../../../gateway/runners/grpc-frames.js";

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

describe("reading a gRPC body's frames as its bytes arrive", () => {
  const frame = (message: Uint8Array, flags = 0): Buffer => {
    const header = Buffer.alloc(GRPC_FRAME_HEADER_BYTES);
    header[0] = flags;
    header.writeUInt32BE(message.length, 1);
    return Buffer.concat([header, message]);
  };
  const responses = [{ writes: 1n }, { writes: 300n }, {}, { writes: 2n ** 40n }].map((init) => toBinary(WriteStreamResponseSchema, create(WriteStreamResponseSchema, init)));
  const body = Buffer.concat(responses.map((message) => frame(message)));
  const readAll = (chunks: Buffer[]): bigint[] => {
    const reader = new FrameReader(WriteStreamResponseSchema);
    const writes: bigint[] = [];
    for (const chunk of chunks) reader.read(chunk, (message) => writes.push(message.writes));
    reader.finish();
    return writes;
  };

  it("hands on every message in order, whether a chunk holds several frames, one, or a piece of a header", () => {
    expect(readAll([body])).toEqual([1n, 300n, 0n, 2n ** 40n]);
    for (const size of [1, 2, 3, 5, 7]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < body.length; at += size) chunks.push(body.subarray(at, at + size));
      expect(readAll(chunks), `${size}-byte chunks`).toEqual([1n, 300n, 0n, 2n ** 40n]);
    }
  });

  it("refuses a compressed message, one over the limit, and a body that ends inside a frame", () => {
    const failure = (chunks: Buffer[]) => {
      try {
        readAll(chunks);
        return undefined;
      } catch (err) {
        return ConnectError.from(err).code;
      }
    };
    expect(failure([frame(responses[1]!, 1)])).toBe(Code.Internal);
    const huge = Buffer.alloc(GRPC_FRAME_HEADER_BYTES);
    huge.writeUInt32BE(MAX_RESPONSE_MESSAGE_BYTES + 1, 1);
    expect(failure([huge])).toBe(Code.ResourceExhausted);
    expect(failure([body.subarray(0, body.length - 1)])).toBe(Code.Internal);
    expect(failure([body.subarray(0, 3)])).toBe(Code.Internal);
  });
});
