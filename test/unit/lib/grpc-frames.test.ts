import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { WriteStreamResponseSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { encodedFrames, FrameReader, GRPC_FRAME_HEADER_BYTES } from "../../../lib/grpc-frames.js";

/** The reader's limit in these tests. */
const MAX_BYTES = 1024;

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
    const reader = new FrameReader(WriteStreamResponseSchema, MAX_BYTES);
    const writes: bigint[] = [];
    for (const chunk of chunks) reader.read(chunk, (message) => writes.push(message.writes));
    reader.finish();
    return writes;
  };

  it("reads back what the encoder's frames carry", () => {
    const frames = encodedFrames(WriteStreamResponseSchema);
    const written = [0n, 1n, 300n, 2n ** 40n].map((writes) => Buffer.from(frames(create(WriteStreamResponseSchema, { writes }))));
    expect(readAll(written)).toEqual([0n, 1n, 300n, 2n ** 40n]);
  });

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
    huge.writeUInt32BE(MAX_BYTES + 1, 1);
    expect(failure([huge])).toBe(Code.ResourceExhausted);
    expect(failure([body.subarray(0, body.length - 1)])).toBe(Code.Internal);
    expect(failure([body.subarray(0, 3)])).toBe(Code.Internal);
  });
});
