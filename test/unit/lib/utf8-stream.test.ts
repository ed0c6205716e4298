import { afterEach, describe, expect, it, vi } from "vitest";
import { Utf8Stream } from "../../../lib/utf8-stream.js";
import { randomUtf8Streams } from "../../support/random-utf8.js";

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);

/** Feeds `chunks` to a Utf8Stream and to TextDecoder's streaming mode; each chunk's text and the final flush must be the same. Returns the held counts. */
function checkAgainstDecoder(chunks: readonly Uint8Array[]): number[] {
  const decoder = new TextDecoder("utf-8");
  const stream = new Utf8Stream();
  const held: number[] = [];
  for (const chunk of chunks) {
    expect(stream.decode(chunk)).toBe(decoder.decode(chunk, { stream: true }));
    held.push(stream.held);
  }
  expect(stream.end()).toBe(decoder.decode());
  return held;
}

afterEach(() => vi.restoreAllMocks());

describe("Utf8Stream", () => {
  it("joins a character split across chunks, ASCII around it included", () => {
    const euro = Buffer.from("€");
    expect(checkAgainstDecoder([Buffer.from("ab"), bytes(0x61, euro[0]!), euro.subarray(1, 2), Buffer.concat([euro.subarray(2), Buffer.from("cd")]), Buffer.from("ef")])).toEqual([0, 1, 2, 0, 0]);
  });

  it("replaces a held start that ASCII does not continue, rather than passing the ASCII on alone", () => {
    expect(checkAgainstDecoder([bytes(0x61, 0xe2), Buffer.from("bc")])).toEqual([1, 0]);
    const stream = new Utf8Stream();
    stream.decode(bytes(0xf0, 0x9f));
    expect(stream.decode(Buffer.from("x"))).toBe("\ufffdx");
  });

  it("gives U+FFFD for a character left unfinished at the end, and starts afresh", () => {
    const stream = new Utf8Stream();
    expect(stream.decode(bytes(0x41, 0xe2, 0x82))).toBe("A");
    expect(stream.held).toBe(2);
    expect(stream.end()).toBe("\ufffd");
    expect(stream.held).toBe(0);
    expect(stream.decode(Buffer.from("ok"))).toBe("ok");
  });

  it("forgets what it held on reset, as a new decoder would", () => {
    const stream = new Utf8Stream();
    stream.decode(bytes(0xe2, 0x82));
    stream.reset();
    expect(stream.held).toBe(0);
    expect(stream.decode(bytes(0xac, 0x41))).toBe("\ufffdA");
  });

  it("reads a view into a larger buffer without the bytes around it", () => {
    const whole = Buffer.from("xxhello€yy");
    expect(new Utf8Stream().decode(whole.subarray(2, 7))).toBe("hello");
    expect(new Utf8Stream().decode(whole.subarray(2, 10))).toBe("hello€");
  });

  it("passes ASCII with nothing held by TextDecoder, and everything else through it", () => {
    const decode = vi.spyOn(TextDecoder.prototype, "decode");
    const stream = new Utf8Stream();
    expect(stream.decode(Buffer.from("plain \x1b[1mASCII\x1b[0m\r\n"))).toBe("plain \x1b[1mASCII\x1b[0m\r\n");
    expect(decode).not.toHaveBeenCalled();
    expect(stream.decode(Buffer.from("é"))).toBe("é");
    expect(decode).toHaveBeenCalledTimes(1);
  });

  it("agrees with TextDecoder on random byte streams cut at random places", () => {
    // Runs of ASCII (the fast path) between real characters of every length and stray bytes; empty chunks too.
    for (const chunks of randomUtf8Streams({ seed: 11, runs: 300, pieces: ["abc", "\r\n", "é", "€", "😀", "\u{10ffff}"], strayShare: 0.1, minChunk: 0 })) checkAgainstDecoder(chunks);
  });
});
