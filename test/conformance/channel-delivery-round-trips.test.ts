import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCreditParams, parseFlowControl, parseFrameParams, parseReceiveLimits, parseResumedChannels, parseWindowResumes } from "../../ahp/channel-delivery.js";
import { FrameAssembler } from "../../ahp/frame-assembler.js";
import { FrameCursor } from "../../ahp/frame-cursor.js";
import { SendWindow } from "../../ahp/send-window.js";

interface Fixture {
  name: string;
  type: string;
  input: any;
  acceptableOutputs?: unknown[];
}

/** The fixtures of the shared file: a `--- path @commit` header, then one JSON document each. */
function fixtures(): Fixture[] {
  const text = readFileSync(join(import.meta.dirname, "fixtures/1.1.0/channel-delivery-round-trips.txt"), "utf8");
  const body = text.slice(0, text.indexOf("Other related round-trip paths"));
  return body
    .split(/^--- .*$/m)
    .slice(1)
    .map((chunk) => JSON.parse(chunk) as Fixture);
}

const WIDE = { windowBytes: 2 ** 40, maximumFrameBytes: 1024 * 1024, maximumMessageBytes: 2 ** 40 };

/** Reads a fixture's input with the project's own readers and writes it back. */
const roundTrip: Record<string, (input: any) => unknown> = {
  SubscribeParams: (input) => ({ channel: input.channel, flowControl: { receive: parseReceiveLimits(input.flowControl.receive) } }),
  SubscribeResult: (input) => (input.flowControl === undefined ? {} : { flowControl: parseFlowControl(input.flowControl) }),
  ReconnectResult: (input) => ({ ...input, windows: { items: parseResumedChannels(input.windows) } }),
  ReconnectParams: (input) => ({ ...input, windows: { items: parseWindowResumes(input.windows, input.subscriptions) } }),
  ChannelFrameParams: (input) => {
    const params = parseFrameParams(input);
    // The fragment's text survives reassembly (BMP and surrogate pairs alike).
    const assembled = new FrameAssembler(WIDE).push(params.data, true);
    expect(assembled).toBe(input.data);
    return params;
  },
  ChannelCreditParams: (input) => {
    const params = parseCreditParams(input);
    const window = new SendWindow(WIDE);
    window.start(params.consumedBytes);
    window.finish();
    window.credit(params.consumedBytes);
    expect(window.outstanding).toBe(0);
    return params;
  },
};

describe("official windowed-delivery round-trip fixtures (protocol 1.1.0)", () => {
  const all = fixtures();

  it("finds every fixture of the file, each of a type read here", () => {
    expect(all.map((fixture) => fixture.name)).toEqual([
      "channel-delivery-subscribe",
      "channel-delivery-subscribe-result",
      "channel-delivery-reconnect",
      "channel-delivery-frame",
      "channel-delivery-credit",
      "channel-delivery-ordinary-subscribe-result",
      "channel-delivery-no-retained-subscriptions",
      "channel-delivery-unicode-frame",
      "channel-reconnect-action-checkpoint",
    ]);
    for (const fixture of all) expect(Object.keys(roundTrip), fixture.name).toContain(fixture.type);
  });

  for (const fixture of all) {
    it(`${fixture.name}: read and written back unchanged`, () => {
      const output = roundTrip[fixture.type]!(fixture.input);
      expect(output).toEqual(fixture.input);
      if (fixture.acceptableOutputs) expect(fixture.acceptableOutputs).toContainEqual(output);
    });
  }

  it("the frames this project writes for the unicode fixture's message carry it exactly", () => {
    const unicode = all.find((fixture) => fixture.name === "channel-delivery-unicode-frame")!;
    const cursor = new FrameCursor(unicode.input.channel, unicode.input.data, 16384);
    expect(JSON.parse(cursor.next()).params).toEqual(unicode.input);
    expect(cursor.done).toBe(true);
  });
});
