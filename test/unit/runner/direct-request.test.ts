import { PassThrough } from "node:stream";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { WriteStreamRequestSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { directRequestMessages } from "../../../services/runner/rpc/direct-request.js";

const MAX_BYTES = 1024;

/** A gRPC frame of one WriteStream message. */
const frame = (id: string, data: string): Buffer => {
  const message = Buffer.from(toBinary(WriteStreamRequestSchema, create(WriteStreamRequestSchema, { id, data: Buffer.from(data) })));
  const header = Buffer.alloc(5);
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
};

/** A frame header announcing `bytes` of message. */
const headerOf = (bytes: number): Buffer => {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(bytes, 1);
  return header;
};

/** Reads every message of `messages` as "id:data", and the error that ended them, if any. */
async function readAll(messages: AsyncIterable<{ id: string; data: Uint8Array }>): Promise<{ read: string[]; error?: unknown }> {
  const read: string[] = [];
  try {
    for await (const message of messages) read.push(`${message.id}:${Buffer.from(message.data).toString()}`);
  } catch (err) {
    return { read, error: err };
  }
  return { read };
}

/** The error a refused call's messages end with. */
const refusalOf = (error: unknown): ConnectError => {
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
};

/** Node's error for a stream closed before its end, which the service answers as CANCELED and logs at debug (connect-error.ts). */
const PREMATURE_CLOSE = "ERR_STREAM_PREMATURE_CLOSE";

describe("a direct call's request messages", () => {
  it("come in order however the body's chunks cut them: several in one chunk, one across three", async () => {
    const body = new PassThrough();
    const messages = directRequestMessages(body, WriteStreamRequestSchema, MAX_BYTES, undefined);
    const reading = readAll(messages);
    const second = frame("t", "second");
    body.write(Buffer.concat([frame("t", "a"), frame("u", "b")]));
    body.write(second.subarray(0, 3));
    body.write(second.subarray(3, 9));
    body.end(Buffer.concat([second.subarray(9), frame("t", "")]));
    expect(await reading).toEqual({ read: ["t:a", "u:b", "t:second", "t:"] });
  });

  it("are not read from the body before the implementation asks for them", async () => {
    const body = new PassThrough();
    const messages = directRequestMessages(body, WriteStreamRequestSchema, MAX_BYTES, undefined);
    body.write(frame("t", "a"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.readableFlowing).toBeNull();
    expect(body.readableLength).toBeGreaterThan(0);
    const reading = readAll(messages);
    body.end();
    expect(await reading).toEqual({ read: ["t:a"] });
  });

  it("hand none of a chunk on when a malformed message follows them in it: INVALID_ARGUMENT, and the body is read no further", async () => {
    const body = new PassThrough();
    const reading = readAll(directRequestMessages(body, WriteStreamRequestSchema, MAX_BYTES, undefined));
    body.write(frame("t", "before"));
    await new Promise((resolve) => setImmediate(resolve));
    body.write(Buffer.concat([frame("t", "same chunk"), headerOf(3), Buffer.from([0xff, 0xff, 0xff])]));
    body.write(frame("t", "after"));
    const { read, error } = await reading;
    expect(read).toEqual(["t:before"]);
    expect(refusalOf(error).code).toBe(Code.InvalidArgument);
    expect(refusalOf(error).rawMessage).toBe("the request body is not a valid terminal.v1.WriteStreamRequest");
    expect(body.isPaused()).toBe(true);
  });

  it("pass on the messages before an oversized one, then refuse it with RESOURCE_EXHAUSTED once its bytes are dropped", async () => {
    const body = new PassThrough();
    const reading = readAll(directRequestMessages(body, WriteStreamRequestSchema, MAX_BYTES, undefined));
    body.write(Buffer.concat([frame("t", "kept"), headerOf(MAX_BYTES + 1), Buffer.alloc(100)]));
    body.write(Buffer.alloc(MAX_BYTES + 1 - 100));
    const { read, error } = await reading;
    expect(read).toEqual(["t:kept"]);
    expect(refusalOf(error).code).toBe(Code.ResourceExhausted);
    expect(refusalOf(error).rawMessage).toContain(`larger than the ${MAX_BYTES} bytes the runner accepts`);
  });

  it("end with node's premature-close error when the body closes before its end, and with the call's refusal before anything is read", async () => {
    const body = new PassThrough();
    const reading = readAll(directRequestMessages(body, WriteStreamRequestSchema, MAX_BYTES, undefined));
    body.write(frame("t", "a"));
    await new Promise((resolve) => setImmediate(resolve));
    body.destroy();
    const closed = await reading;
    expect(closed.read).toEqual(["t:a"]);
    expect((closed.error as NodeJS.ErrnoException).code).toBe(PREMATURE_CLOSE);

    const refused = new PassThrough();
    refused.write(frame("t", "a"));
    const refusal = new ConnectError("compression is not accepted", Code.Unimplemented);
    expect(await readAll(directRequestMessages(refused, WriteStreamRequestSchema, MAX_BYTES, refusal))).toEqual({ read: [], error: refusal });
    expect(refused.readableFlowing).toBeNull();
  });

  it("end with node's premature-close error when the body was reset before the implementation asked for anything", async () => {
    const body = new PassThrough();
    const messages = directRequestMessages(body, WriteStreamRequestSchema, MAX_BYTES, undefined);
    body.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    const { read, error } = await readAll(messages);
    expect(read).toEqual([]);
    expect((error as NodeJS.ErrnoException).code).toBe(PREMATURE_CLOSE);
  });
});
