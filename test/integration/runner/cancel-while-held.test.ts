import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import type { TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";
import { RunnerMetrics } from "../../../services/runner/metrics.js";
import { endOffsetOf, eventually, HELD_FLOOD_WATCH_MS, QUIET_SHELL_ENV, subscribersIn, useTestRunner } from "./harness.js";

const metrics = new RunnerMetrics();
const runner = useTestRunner({ metrics, env: { ...process.env, ...QUIET_SHELL_ENV } });

/** Waits until the flood's offset stops moving: its one reader's response stream is full and waits for room. */
async function untilHeld(id: string): Promise<void> {
  for (let offset = await endOffsetOf(runner.grpc, id); ; ) {
    await sleep(HELD_FLOOD_WATCH_MS);
    const now = await endOffsetOf(runner.grpc, id);
    if (now === offset) return;
    offset = now;
  }
}

/** Opens a call on a `yes` flood with `open`, takes one message, lets the call fill up, cancels it, and says whether the runner let go of the terminal. */
async function cancelledWhileHeld(open: (id: string, signal: AbortSignal) => AsyncIterator<unknown>): Promise<{ readersAfter: number; subscribersBack: boolean }> {
  const before = await subscribersIn(metrics);
  const id = (await runner.grpc.spawn({ argv: ["yes"], env: QUIET_SHELL_ENV })).terminal!.id;
  const controller = new AbortController();
  const call = open(id, controller.signal);
  expect((await call.next()).done).toBe(false);
  await untilHeld(id);
  expect(runner.registry.get(id).readerCount).toBe(1);
  controller.abort();
  const subscribersBack = await eventually(async () => (await subscribersIn(metrics)) === before);
  const readersAfter = runner.registry.get(id).readerCount;
  await runner.grpc.close({ id, graceMs: 0 });
  return { readersAfter, subscribersBack };
}

const attachOver = (client: Client<typeof TerminalService>) => (id: string, signal: AbortSignal) =>
  client.attach({ id, follow: true }, { signal })[Symbol.asyncIterator]();

describe("a call cancelled while its response waits for room", () => {
  it("closes an Attach's reader (gRPC over HTTP/2)", async () => {
    expect(await cancelledWhileHeld(attachOver(runner.grpc))).toEqual({ readersAfter: 0, subscribersBack: true });
  });

  it("closes an Attach's reader (Connect over HTTP/1.1)", async () => {
    const http1 = runner.clientFor((baseUrl, interceptors) => createConnectTransport({ baseUrl, interceptors, httpVersion: "1.1" }));
    expect(await cancelledWhileHeld(attachOver(http1))).toEqual({ readersAfter: 0, subscribersBack: true });
  });

  it("closes a Follow's reader (gRPC over HTTP/2)", async () => {
    const { createWritableIterable } = await import("@connectrpc/connect/protocol");
    const follow = (id: string, signal: AbortSignal) => {
      const requests = createWritableIterable<{ action: { case: "start"; value: { followId: number; attach: { id: string } } } }>();
      void requests.write({ action: { case: "start", value: { followId: 1, attach: { id } } } });
      return runner.grpc.follow(requests, { signal })[Symbol.asyncIterator]();
    };
    expect(await cancelledWhileHeld(follow)).toEqual({ readersAfter: 0, subscribersBack: true });
  });
});
