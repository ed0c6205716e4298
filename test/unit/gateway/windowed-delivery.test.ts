import { afterEach, describe, expect, it, vi } from "vitest";
import { AhpClient } from "../../../ahp/ahp-client.js";
import type { ChannelFlowControl } from "../../../ahp/channel-delivery.js";
import { createLogger } from "../../../lib/logger.js";
import { notificationFrame } from "../../../ahp/json-rpc.js";
import { WindowedDelivery } from "../../../gateway/wire/windowed-delivery.js";

const A = "ahp-terminal:/a";
const B = "ahp-terminal:/b";
const flowControl = (windowBytes: number, maximumFrameBytes = 4096, maximumMessageBytes = 4 * 1024 * 1024): ChannelFlowControl => ({
  clientReceive: { windowBytes, maximumFrameBytes, maximumMessageBytes },
  hostReceive: { windowBytes: 4096, maximumFrameBytes: 1024, maximumMessageBytes: 64 * 1024 },
});
const data = (channel: string, serverSeq: number, text: string) => notificationFrame("action", { channel, serverSeq, action: { type: "terminal/data", data: text } });

/** Windowed delivery wired to an AhpClient over an in-memory socket (frames cross in microtasks, as over a real one). */
function pair(credit: "auto" | "manual" = "auto") {
  const wire: string[] = [];
  const events: Array<{ method: string; params: any }> = [];
  const ended: string[] = [];
  const received: Array<Record<string, unknown>> = [];
  const paces: string[] = [];
  const errors: string[] = [];
  let snapshots = 0;
  const client = new AhpClient(
    { send: (text) => queueMicrotask(() => fromClient(text)) },
    {
      action: (envelope) => events.push({ method: "action", params: envelope }),
      notification: (method, params) => events.push({ method, params }),
      deliveryError: (channel, reason) => errors.push(`${channel}: ${reason}`),
    },
  );
  const delivery: WindowedDelivery = new WindowedDelivery({
    send(frame) {
      wire.push(frame);
      queueMicrotask(() => client.receive(frame));
    },
    bufferedAmount: 0,
    snapshotMessage: (channel) => notificationFrame("channel/snapshot", { channel, snapshot: { resource: channel, state: { content: [], n: ++snapshots }, fromSeq: 100 } }),
    room: (channel) => paces.push(`${channel} ${delivery.pace(channel)}`),
    ended: (channel) => ended.push(channel),
    received: (message, done) => {
      received.push(message);
      done();
    },
    log: createLogger("silent", "test"),
  });
  function fromClient(text: string): void {
    const message = JSON.parse(text);
    delivery.fromClient(message.method, message.params, text.length);
  }
  const open = (channel: string, fc: ChannelFlowControl, bootstrap: string[] = []): void => {
    // As the gateway does: the reply (which installs the client's window) goes out before any frame.
    delivery.open(channel, fc, bootstrap);
    client.openWindow(channel, fc, credit);
    delivery.activate(channel);
  };
  const settle = async (): Promise<void> => {
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
  };
  return { client, delivery, wire, events, ended, received, paces, errors, open, settle };
}

afterEach(() => vi.useRealTimers());

describe("windowed delivery between the gateway and a client", () => {
  it("frames the bootstrap, then channel/ready, then live messages, each reassembled whole and credited back", async () => {
    const { client, delivery, events, wire, open, settle } = pair();
    const snapshot = notificationFrame("channel/snapshot", { channel: A, snapshot: { resource: A, state: { content: [{ type: "unclassified", value: "x".repeat(5000) }] }, fromSeq: 7 } });
    open(A, flowControl(64 * 1024), [snapshot]);
    delivery.deliver(A, data(A, 8, "live 😀"));
    await settle();
    expect(events.map((event) => event.method)).toEqual(["channel/snapshot", "channel/ready", "action"]);
    expect(events[0]!.params.snapshot.fromSeq).toBe(7);
    expect(events[2]!.params.action.data).toBe("live 😀");
    expect(wire.filter((frame) => frame.includes('"channel/frame"')).length).toBeGreaterThan(2);
    expect(wire.every((frame) => frame.length * 2 <= 4096)).toBe(true);
    expect(client.windowStats(A)).toMatchObject({ outstanding: 0, messages: 2 });
    expect(client.lastSeenServerSeq).toBe(8);
  });

  it("starts no message while the viewer's window is full, and goes on as credit comes back", async () => {
    const { client, delivery, events, open, settle } = pair("manual");
    open(A, flowControl(2000));
    for (let i = 1; i <= 10; i++) delivery.deliver(A, data(A, i, "y".repeat(400)));
    await settle();
    const first = events.filter((event) => event.method === "action").length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(10);
    expect(client.windowStats(A)!.maxOutstanding).toBeLessThan(2000 + 4 * 1024 * 1024);
    expect(delivery.pace(A)).toBe("busy");
    while (events.filter((event) => event.method === "action").length < 10) {
      expect(client.release(A)).toBeDefined();
      await settle();
    }
    expect(events.filter((event) => event.method === "action").map((event) => event.params.serverSeq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("interleaves frames of channels fairly: a small message is not held behind a large one", async () => {
    const { delivery, wire, open, settle } = pair();
    open(A, flowControl(1024 * 1024, 1024));
    open(B, flowControl(1024 * 1024, 1024));
    delivery.deliver(A, data(A, 1, "a".repeat(200_000)));
    delivery.deliver(B, data(B, 2, "small"));
    await settle();
    const frames = wire.filter((frame) => frame.includes('"channel/frame"')).map((frame) => JSON.parse(frame).params);
    const lastOfA = frames.findLastIndex((frame) => frame.channel === A);
    const lastOfB = frames.findLastIndex((frame) => frame.channel === B);
    // B's message arrived while A's (some 480 frames) was being sent: it waits one turn at most, not for A to finish.
    expect(frames.length).toBeGreaterThan(400);
    expect(lastOfB).toBeLessThan(lastOfA);
    expect(lastOfB).toBeLessThan(frames.length / 4);
  });

  it("resets a channel whose credit names a position never sent, and one whose message exceeds the viewer's limit", async () => {
    const { delivery, wire, ended, open, settle } = pair("manual");
    open(A, flowControl(64 * 1024));
    delivery.deliver(A, data(A, 1, "hello"));
    await settle();
    delivery.fromClient("channel/credit", { channel: A, consumedBytes: 10 }, 60);
    expect(wire.at(-1)).toBe(notificationFrame("channel/reset", { channel: A }));
    expect(ended).toEqual([A]);
    expect(delivery.has(A)).toBe(false);

    open(B, flowControl(64 * 1024, 4096, 200));
    delivery.deliver(B, data(B, 2, "z".repeat(200)));
    await settle();
    expect(ended).toEqual([A, B]);
  });

  it("lets a viewer that returns no credit fall behind alone, then recovers it by snapshot", async () => {
    const { client, delivery, events, paces, open, settle } = pair("manual");
    open(A, flowControl(4096));
    for (let i = 1; i <= 2000; i++) delivery.deliver(A, data(A, i, "w".repeat(500)));
    await settle();
    expect(delivery.pace(A)).toBe("detached");
    expect(paces).toContain(`${A} detached`);
    const before = events.length;
    while (!events.some((event) => event.method === "channel/snapshot")) {
      client.release(A);
      await settle();
    }
    expect(events.length - before).toBeLessThan(20);
    expect(events.find((event) => event.method === "channel/snapshot")!.params.snapshot.fromSeq).toBe(100);
    delivery.deliver(A, data(A, 101, "after"));
    client.release(A);
    await settle();
    client.release(A);
    await settle();
    expect(events.at(-1)!.params.action.data).toBe("after");
  });

  it("stops a viewer setting the pace once its window stays full without credit", () => {
    vi.useFakeTimers();
    const { delivery, open } = pair("manual");
    open(A, flowControl(1000));
    delivery.deliver(A, data(A, 1, "q".repeat(600)));
    expect(delivery.pace(A)).toBe("busy");
    vi.advanceTimersByTime(2_100);
    expect(delivery.pace(A)).toBe("detached");
  });

  it("takes the client's framed messages within its receive limits, credits them once applied, and resets on a broken limit", async () => {
    const { client, delivery, received, wire, open, settle } = pair();
    open(A, flowControl(64 * 1024));
    client.dispatch(A, { type: "terminal/input", data: "p".repeat(20_000) }, { framed: true });
    await settle();
    expect(received).toHaveLength(1);
    expect((received[0]!.params as { action: { data: string } }).action.data).toHaveLength(20_000);
    expect(client.windowStats(A)!.sentOutstanding).toBe(0);
    expect(wire.some((frame) => frame.includes('"channel/credit"'))).toBe(true);
    delivery.fromClient("channel/frame", { channel: A, data: "x".repeat(600), final: true }, 620);
    expect(wire.at(-1)).toBe(notificationFrame("channel/reset", { channel: A }));
  });
});
