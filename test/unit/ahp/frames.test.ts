import { describe, expect, it } from "vitest";
import { DeliveryError, parseFrameParams, utf16Bytes } from "../../../ahp/channel-delivery.js";
import { FrameAssembler } from "../../../ahp/frame-assembler.js";
import { FrameCursor, minimumFrameBytes } from "../../../ahp/frame-cursor.js";
import { SendWindow } from "../../../ahp/send-window.js";

const CHANNEL = "ahp-terminal:/t1";
const limits = (windowBytes: number, maximumFrameBytes: number, maximumMessageBytes: number) => ({ windowBytes, maximumFrameBytes, maximumMessageBytes });

/** Every frame of a message, parsed, with the length of its text. */
function framesOf(text: string, maximumFrameBytes: number): Array<{ params: { channel: string; data: string; final?: boolean }; chars: number }> {
  const cursor = new FrameCursor(CHANNEL, text, maximumFrameBytes);
  const frames = [];
  while (!cursor.done) {
    const frame = cursor.next();
    const parsed = JSON.parse(frame);
    expect(parsed.method).toBe("channel/frame");
    frames.push({ params: parsed.params, chars: frame.length });
  }
  return frames;
}

describe("cutting a message into frames", () => {
  const terminalOutput = JSON.stringify({ jsonrpc: "2.0", method: "action", params: { channel: CHANNEL, action: { type: "terminal/data", data: "\x1b[1;31mred\x1b[0m \"quoted\" back\\slash é 😀\r\n".repeat(400) }, serverSeq: 9 } });

  it("keeps every whole outer frame within maximumFrameBytes after escaping, and joins back to the message", () => {
    for (const maximum of [minimumFrameBytes(CHANNEL), 300, 1000, 4096, 16384]) {
      const frames = framesOf(terminalOutput, maximum);
      for (const { chars } of frames) expect(chars * 2).toBeLessThanOrEqual(maximum);
      expect(frames.map(({ params }) => params.data).join("")).toBe(terminalOutput);
      expect(frames.slice(0, -1).every(({ params }) => params.final === undefined)).toBe(true);
      expect(frames.at(-1)!.params.final).toBe(true);
      expect(frames.every(({ params }) => params.channel === CHANNEL && params.data.length > 0)).toBe(true);
    }
  });

  it("never splits a surrogate pair, even when the limit would fall inside one", () => {
    const text = "😀".repeat(2000);
    for (const maximum of [minimumFrameBytes(CHANNEL), minimumFrameBytes(CHANNEL) + 2, 777]) {
      const frames = framesOf(text, maximum);
      for (const { params } of frames) {
        const first = params.data.charCodeAt(0);
        expect(first >= 0xdc00 && first <= 0xdfff).toBe(false);
        const last = params.data.charCodeAt(params.data.length - 1);
        expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
      }
      expect(frames.map(({ params }) => params.data).join("")).toBe(text);
    }
  });

  it("refuses a frame limit that cannot carry any character on the channel", () => {
    expect(() => new FrameCursor(CHANNEL, "x", minimumFrameBytes(CHANNEL) - 2)).toThrow(RangeError);
  });
});

describe("the sender's window", () => {
  it("starts messages only below the window, lets one overshoot, and takes credit at message boundaries only", () => {
    const window = new SendWindow(limits(100, 1000, 80));
    expect(window.open).toBe(true);
    window.start(60);
    window.finish();
    expect(window.open).toBe(true);
    window.start(80);
    window.finish();
    expect(window.outstanding).toBe(140);
    expect(window.open).toBe(false);
    expect(window.fits(80)).toBe(true);
    expect(window.fits(82)).toBe(false);
    expect(() => window.credit(30)).toThrow(/inside a message/);
    expect(() => window.credit(141)).toThrow(/beyond/);
    window.credit(60);
    expect(window.outstanding).toBe(80);
    window.credit(60);
    window.credit(10);
    expect(window.outstanding).toBe(80);
    window.start(20);
    expect(() => window.credit(160)).toThrow(/beyond/);
    window.credit(140);
    expect(window.outstanding).toBe(20);
  });

  it("keeps positions above 32 bits exact", () => {
    const window = new SendWindow(limits(2 ** 40, 1000, 2 ** 34));
    window.start(8589934592);
    window.finish();
    window.credit(8589934592);
    expect(window.outstanding).toBe(0);
  });
});

describe("the receiver's assembler", () => {
  it("joins fragments, counts UTF-16 bytes and releases cumulative credit once each message is applied", () => {
    const assembler = new FrameAssembler(limits(1000, 200, 1000));
    expect(assembler.push("{\"a\":", undefined, 50)).toBeUndefined();
    const message = assembler.push("\"é😀\"}", true, 50)!;
    expect(message).toBe('{"a":"é😀"}');
    expect(assembler.outstanding).toBe(utf16Bytes(message));
    expect(assembler.release()).toBe(utf16Bytes(message));
    expect(assembler.outstanding).toBe(0);
  });

  it("holds the sender to its limits: frame size, message size, credit before a new message, whole surrogate pairs", () => {
    expect(() => new FrameAssembler(limits(1000, 200, 1000)).push("x", true, 101)).toThrow(DeliveryError);
    expect(() => new FrameAssembler(limits(1000, 2000, 10)).push("123456", true)).toThrow(/maximumMessageBytes/);
    expect(() => new FrameAssembler(limits(1000, 2000, 100)).push("ab\ud83d", false)).toThrow(/surrogate/);
    const assembler = new FrameAssembler(limits(10, 2000, 100));
    assembler.push("123456", true);
    expect(() => assembler.push("x", true)).toThrow(/windowBytes/);
    assembler.release();
    expect(assembler.push("x", true)).toBe("x");
  });

  it("reads frame params strictly, keeping an explicit final: false", () => {
    expect(parseFrameParams({ channel: CHANNEL, data: "x", final: false })).toEqual({ channel: CHANNEL, data: "x", final: false });
    expect(() => parseFrameParams({ channel: CHANNEL, data: "" })).toThrow(DeliveryError);
    expect(() => parseFrameParams({ channel: CHANNEL, data: "x", final: "yes" })).toThrow(DeliveryError);
    expect(() => parseFrameParams({ data: "x" })).toThrow(DeliveryError);
  });
});
