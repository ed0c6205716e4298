import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { gateEnvelopes, gateWholeBody, MAX_DISCARDED_BYTES } from "../../../services/runner/rpc/message-size-gate.js";

const envelope = (payload: Buffer): Buffer => {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
};

/** Splits bytes into chunks of the given sizes (the rest as one last chunk). */
function chunked(bytes: Buffer, sizes: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  if (at < bytes.length) chunks.push(bytes.subarray(at));
  return chunks;
}

/** Runs a gate over chunks: what it passed on, what it checked, and what it threw; `read` counts the chunks it pulled. */
async function run(gate: (body: AsyncIterable<Uint8Array>, check: (message: Uint8Array) => void) => AsyncIterable<Uint8Array>, chunks: Buffer[]) {
  let read = 0;
  async function* body() {
    for (const chunk of chunks) {
      read++;
      yield chunk;
    }
  }
  const checked: string[] = [];
  const passed: Buffer[] = [];
  let error: ConnectError | undefined;
  try {
    for await (const piece of gate(body(), (message) => checked.push(Buffer.from(message).toString()))) passed.push(Buffer.from(piece));
  } catch (err) {
    error = ConnectError.from(err);
  }
  return { passed: Buffer.concat(passed), checked, error, read };
}

describe("gateEnvelopes", () => {
  const gate = (limit: number) => (body: AsyncIterable<Uint8Array>, check: (message: Uint8Array) => void) => gateEnvelopes(body, limit, check);

  it("passes every message on unchanged and checks each whole, however the chunks split headers and payloads", async () => {
    const stream = Buffer.concat([envelope(Buffer.from("first")), envelope(Buffer.alloc(0)), envelope(Buffer.from("third message"))]);
    for (const sizes of [[], [1, 1, 1, 1, 1], [3, 4, 9], [7], Array.from({ length: stream.length }, () => 1)]) {
      const { passed, checked, error } = await run(gate(100), chunked(stream, sizes));
      expect({ passed, checked, error }).toEqual({ passed: stream, checked: ["first", "", "third message"], error: undefined });
    }
  });

  it("passes a chunk whose envelopes begin and end in it on as it came, in one piece; split ones in pieces", async () => {
    const whole = Buffer.concat([envelope(Buffer.from("one")), envelope(Buffer.from("two"))]);
    async function* body() {
      yield whole;
      // Ends inside the next header: what of it is a header waits for the rest.
      yield Buffer.concat([envelope(Buffer.from("three")), Buffer.from([0, 0])]);
      yield Buffer.from([0, 0, 4, 0x66, 0x6f, 0x75, 0x72]);
    }
    const pieces: Uint8Array[] = [];
    for await (const piece of gateEnvelopes(body(), 100, () => {})) pieces.push(piece);
    expect(pieces[0]).toBe(whole);
    expect(pieces.length).toBeGreaterThan(2);
    expect(Buffer.concat(pieces)).toEqual(Buffer.concat([whole, envelope(Buffer.from("three")), envelope(Buffer.from("four"))]));
  });

  it("drops an oversized message without passing on any of it, reads it to its end, then refuses it naming the limit", async () => {
    const stream = Buffer.concat([envelope(Buffer.from("ok")), envelope(Buffer.alloc(50, 0x78)), envelope(Buffer.from("never"))]);
    const { passed, checked, error, read } = await run(gate(10), chunked(stream, [9, 20, 40]));
    expect(passed).toEqual(envelope(Buffer.from("ok")));
    expect(checked).toEqual(["ok"]);
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.rawMessage).toBe("the request message (50 bytes) is larger than the 10 bytes the runner accepts (its --max-message-bytes)");
    // The oversized message ends in the third chunk: the refusal comes once it has all been read, not later.
    expect(read).toBe(3);
  });

  it("refuses at once a message declared larger than it would read", async () => {
    const header = Buffer.alloc(5);
    header.writeUInt32BE(MAX_DISCARDED_BYTES + 1, 1);
    const { passed, error, read } = await run(gate(10), [header, Buffer.alloc(10), Buffer.alloc(10)]);
    expect({ passed: passed.length, code: error?.code, read }).toEqual({ passed: 0, code: Code.ResourceExhausted, read: 1 });
  });

  it("hands on a body that ends inside a header, for the protocol layer to report", async () => {
    const { passed, error } = await run(gate(10), [Buffer.from([0, 0, 0])]);
    expect({ passed, error }).toEqual({ passed: Buffer.from([0, 0, 0]), error: undefined });
  });

  it("lets a failed check stop the chunk it completed in, before any of that chunk goes on", async () => {
    const stream = Buffer.concat([envelope(Buffer.from("ok")), envelope(Buffer.from("bad"))]);
    const failing = (body: AsyncIterable<Uint8Array>) =>
      gateEnvelopes(body, 100, (message) => {
        if (Buffer.from(message).toString() === "bad") throw new ConnectError("bad", Code.InvalidArgument);
      });
    const { passed, error } = await run(failing, [stream]);
    expect({ passed: passed.length, code: error?.code }).toEqual({ passed: 0, code: Code.InvalidArgument });
  });
});

describe("gateWholeBody", () => {
  it("passes a body within the limit on, and checks it whole once it has ended", async () => {
    const { passed, checked, error } = await run((body, check) => gateWholeBody(body, 10, undefined, check), [Buffer.from("hello "), Buffer.from("you")]);
    expect({ passed: passed.toString(), checked, error }).toEqual({ passed: "hello you", checked: ["hello you"], error: undefined });
  });

  it("stops passing on a body that grows past the limit, reads it to its end, then refuses it", async () => {
    const { passed, checked, error, read } = await run((body, check) => gateWholeBody(body, 10, undefined, check), [Buffer.alloc(8), Buffer.alloc(8), Buffer.alloc(8)]);
    expect({ passed: passed.length, checked, read, code: error?.code }).toEqual({ passed: 8, checked: [], read: 3, code: Code.ResourceExhausted });
    expect(error?.rawMessage).toBe("the request message (24 bytes) is larger than the 10 bytes the runner accepts (its --max-message-bytes)");
  });

  it("passes nothing of a body whose Content-Length is over the limit, and refuses one over what it would read before reading it", async () => {
    const declaredOver = await run((body, check) => gateWholeBody(body, 10, 16, check), [Buffer.alloc(8), Buffer.alloc(8)]);
    expect({ passed: declaredOver.passed.length, read: declaredOver.read, message: declaredOver.error?.rawMessage }).toEqual({
      passed: 0,
      read: 2,
      message: "the request message (16 bytes) is larger than the 10 bytes the runner accepts (its --max-message-bytes)",
    });
    const huge = await run((body, check) => gateWholeBody(body, 10, MAX_DISCARDED_BYTES + 1, check), [Buffer.alloc(8)]);
    expect({ read: huge.read, code: huge.error?.code }).toEqual({ read: 0, code: Code.ResourceExhausted });
  });

  it("passes on a body larger than what it would read of a refused one, when the limit allows it", async () => {
    const mebibyte = Buffer.alloc(1024 * 1024);
    const chunks = Array.from({ length: MAX_DISCARDED_BYTES / mebibyte.length + 2 }, () => mebibyte);
    const total = chunks.length * mebibyte.length;
    for (const declared of [undefined, total]) {
      const { passed, checked, error } = await run((body, check) => gateWholeBody(body, total, declared, (message) => check(message.subarray(0, 1))), chunks);
      expect({ passed: passed.length, checked: checked.length, error }).toEqual({ passed: total, checked: 1, error: undefined });
    }
  });
});
