import { describe, expect, it } from "vitest";
import { terminalReducer } from "../../ahp/terminal-reducer.js";
import type { TerminalState } from "../../ahp/types.js";
import { AhpTestClient, contentText } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { useTwoProcesses } from "./two-processes.js";

const RECEIVE = { windowBytes: 64 * 1024, maximumFrameBytes: 16 * 1024, maximumMessageBytes: 4 * 1024 * 1024 };

const services = useTwoProcesses();

/** A 1.1 viewer with a window on `uri`, crediting each message once applied, or only when the test releases it. */
async function windowedViewer(uri: string, credit: "auto" | "manual"): Promise<AhpTestClient> {
  const viewer = await AhpTestClient.initialized(services.url, { versions: ["1.1.0"] });
  const { flowControl } = await viewer.subscribeWindowed(uri, RECEIVE, credit);
  expect(flowControl.clientReceive).toEqual(RECEIVE);
  return viewer;
}

/** The terminal as a windowed viewer rebuilds it from what it reassembled: its last snapshot and every envelope after it. */
function mirror(viewer: AhpTestClient, uri: string): TerminalState {
  let state: TerminalState | undefined;
  let from = 0;
  for (const message of viewer.frames as Array<{ method: string; params: any }>) {
    if (!viewer.framed.has(message) || message.params.channel !== uri) continue;
    if (message.method === "channel/snapshot") [state, from] = [message.params.snapshot.state, message.params.snapshot.fromSeq];
    else if (message.method === "action" && state && message.params.serverSeq > from && !message.params.rejectionReason) state = terminalReducer(state, message.params.action);
  }
  return state!;
}

/** The largest message the viewer reassembled, in UTF-16 bytes (what the window may be overshot by). */
function largestMessage(viewer: AhpTestClient): number {
  let largest = 0;
  for (const message of viewer.frames as object[]) if (viewer.framed.has(message)) largest = Math.max(largest, JSON.stringify({ jsonrpc: "2.0", ...message }).length * 2);
  return largest;
}

/** Releases a manual-credit viewer's applied messages every few milliseconds: a consumer slower than the socket. */
function creditSlowly(viewer: AhpTestClient, uri: string): () => void {
  const timer = setInterval(() => viewer.release(uri), 5);
  return () => clearInterval(timer);
}

describe("a 1.1 viewer with windowed delivery, against the two real processes", () => {
  it("gets exactly what the shell wrote, rebuilt from the frames", async () => {
    const uri = "ahp-terminal:/windowed-seq";
    const creator = await AhpTestClient.initialized(services.url, { versions: ["1.1.0"] });
    await creator.call("createTerminal", { channel: uri });
    const viewer = await windowedViewer(uri, "auto");
    viewer.dispatch(uri, { type: "terminal/input", data: "seq 1 100000; echo seq-$((1+1))-done\r" });
    await viewer.waitForOutput(uri, /seq-2-done\r\n/, 60_000, 64);
    // seq writes "1\n2\n…"; the terminal's line discipline makes each "\n" "\r\n".
    const written = Array.from({ length: 100_000 }, (_, i) => `${i + 1}\r\n`).join("");
    expect(contentText(mirror(viewer, uri))).toContain(`\r\n${written}seq-2-done\r\n`);
    expect(viewer.deliveryErrors).toEqual([]);
    for (const socket of [viewer, creator]) socket.close();
  }, 90_000);

  it("paces a flood by its credit within its window, and ^C stops the flood promptly", async () => {
    const uri = "ahp-terminal:/windowed-flood";
    const creator = await AhpTestClient.initialized(services.url, { versions: ["1.1.0"] });
    await creator.call("createTerminal", { channel: uri });
    const viewer = await windowedViewer(uri, "manual");
    const stopCredit = creditSlowly(viewer, uri);
    try {
      viewer.dispatch(uri, { type: "terminal/input", data: "yes flood-line\r" });
      expect(await eventually(() => viewer.outputOf(uri).length > 2_000_000, 30_000)).toBe(true);
      const atInterrupt = viewer.outputOf(uri).length;
      viewer.dispatch(uri, { type: "terminal/input", data: "\u0003" });
      viewer.dispatch(uri, { type: "terminal/input", data: "echo after-$((1+1))\r" });
      await viewer.waitForOutput(uri, /after-2\r\n/, 30_000, 4096);
      // What was already read ahead (the runner's credit, one HTTP/2 window, this viewer's window) still arrives; no more.
      expect(viewer.outputOf(uri).length - atInterrupt).toBeLessThan(1024 * 1024);
      const stats = viewer.windowStats(uri)!;
      expect(stats.maxOutstanding).toBeLessThan(RECEIVE.windowBytes + largestMessage(viewer));
      expect(viewer.deliveryErrors).toEqual([]);
    } finally {
      stopCredit();
      for (const socket of [viewer, creator]) socket.close();
    }
  }, 90_000);

  it("does not slow an ordinary viewer of the same terminal when it returns no credit: it falls behind alone and recovers by snapshot", async () => {
    const uri = "ahp-terminal:/windowed-beside";
    const ordinary = await AhpTestClient.initialized(services.url, { versions: ["0.9.0"] });
    await ordinary.call("createTerminal", { channel: uri });
    await ordinary.call("subscribe", { channel: uri });
    const viewer = await windowedViewer(uri, "manual");
    ordinary.dispatch(uri, { type: "terminal/input", data: "yes beside-line\r" });
    // The windowed viewer holds its window and releases nothing: the ordinary one still gets the flood.
    expect(await eventually(() => ordinary.outputOf(uri).length > 8 * 1024 * 1024, 60_000)).toBe(true);
    const stats = viewer.windowStats(uri)!;
    expect(stats.outstanding).toBeGreaterThan(0);
    expect(stats.maxOutstanding).toBeLessThan(RECEIVE.windowBytes + largestMessage(viewer));
    expect(viewer.outputOf(uri).length).toBeLessThan(RECEIVE.windowBytes + largestMessage(viewer));
    ordinary.dispatch(uri, { type: "terminal/input", data: "\u0003" });
    ordinary.dispatch(uri, { type: "terminal/input", data: "echo calm-$((2+2))\r" });
    await ordinary.waitForOutput(uri, /calm-4\r\n/, 30_000, 4096);

    const stopCredit = creditSlowly(viewer, uri);
    try {
      // The first snapshot was the bootstrap; the next one is the recovery.
      let snapshots = 0;
      await viewer.waitFor((frame) => viewer.framed.has(frame as object) && (frame as { method: string }).method === "channel/snapshot" && ++snapshots === 2, 30_000);
      const reference = async (): Promise<string> => contentText((await ordinary.call("subscribe", { channel: uri })).snapshot.state);
      expect(await eventually(async () => contentText(mirror(viewer, uri)) === (await reference()), 30_000)).toBe(true);
      expect(contentText(mirror(viewer, uri))).toContain("calm-4\r\n");
      expect(viewer.deliveryErrors).toEqual([]);
    } finally {
      stopCredit();
      for (const socket of [viewer, ordinary]) socket.close();
    }
  }, 120_000);
});
