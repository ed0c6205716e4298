import { describe, expect, it } from "vitest";
import { incompleteUtf8Tail, Utf8Tail } from "../../../lib/utf8-tail.js";
import { randomUtf8Streams } from "../../support/random-utf8.js";

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);

/** Feeds `chunks` to a streaming decoder and to a Utf8Tail, checking after each that the held count is exactly what the decoder holds back. */
function checkAgainstDecoder(chunks: readonly Uint8Array[]): number[] {
  const decoder = new TextDecoder("utf-8");
  const tail = new Utf8Tail();
  const seen: number[] = [];
  let decoded = "";
  let all = new Uint8Array(0);
  for (const chunk of chunks) {
    decoded += decoder.decode(chunk, { stream: true });
    const joined = new Uint8Array(all.length + chunk.length);
    joined.set(all);
    joined.set(chunk, all.length);
    all = joined;
    const held = tail.push(chunk);
    // What the decoder gave out so far is exactly the stream without the held bytes, decoded on its own.
    expect(new TextDecoder().decode(all.subarray(0, all.length - held))).toBe(decoded);
    seen.push(held);
  }
  return seen;
}

describe("incompleteUtf8Tail", () => {
  it("holds the start of a character that is not complete yet, and nothing of a complete one", () => {
    expect(incompleteUtf8Tail(bytes())).toBe(0);
    expect(incompleteUtf8Tail(Buffer.from("abc"))).toBe(0);
    expect(incompleteUtf8Tail(Buffer.from("a€"))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0x61, 0xe2))).toBe(1);
    expect(incompleteUtf8Tail(bytes(0x61, 0xe2, 0x82))).toBe(2);
    expect(incompleteUtf8Tail(bytes(0xf0, 0x9f, 0x98))).toBe(3);
    expect(incompleteUtf8Tail(bytes(0xf0, 0x9f, 0x98, 0x80))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xc3))).toBe(1);
  });

  it("holds nothing of bytes that can no longer become a character", () => {
    expect(incompleteUtf8Tail(bytes(0x80))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xe2, 0x41))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xe2, 0xc3))).toBe(1);
    expect(incompleteUtf8Tail(bytes(0xc0))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xc1))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xf5))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xff))).toBe(0);
    // Over-long, surrogate and past-U+10FFFF starts.
    expect(incompleteUtf8Tail(bytes(0xe0, 0x80))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xed, 0xa0))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xf0, 0x80))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xf4, 0x90))).toBe(0);
    expect(incompleteUtf8Tail(bytes(0xf4, 0x8f))).toBe(2);
  });
});

describe("Utf8Tail", () => {
  it("follows a four-byte character split over three chunks", () => {
    const smile = Buffer.from("😀");
    expect(checkAgainstDecoder([Buffer.from("ab"), smile.subarray(0, 1), smile.subarray(1, 2), Buffer.concat([smile.subarray(2), Buffer.from("c")])])).toEqual([0, 1, 2, 0]);
    expect(checkAgainstDecoder([smile.subarray(0, 1), smile.subarray(1, 3), smile.subarray(3)])).toEqual([1, 3, 0]);
  });

  it("drops what it held when the next chunk cannot continue it, and holds a new start after it", () => {
    expect(checkAgainstDecoder([bytes(0x61, 0xf0, 0x9f), bytes(0x41, 0xe2), bytes(0x82), bytes(0xac)])).toEqual([2, 1, 2, 0]);
    expect(checkAgainstDecoder([bytes(0xe2), bytes(0xe2), bytes(0x80, 0x80, 0x80)])).toEqual([1, 1, 0]);
  });

  it("agrees with TextDecoder on random byte streams cut at random places", () => {
    // Mostly real characters of every length, with some stray bytes among them.
    for (const chunks of randomUtf8Streams({ seed: 7, runs: 200, pieces: ["a", "é", "€", "😀", "\u{10ffff}"], strayShare: 0.15, minChunk: 1 })) checkAgainstDecoder(chunks);
  });
});
