import { describe, expect, it } from "vitest";
import { LABEL_URI } from "../../../gateway/runners/runner-labels.js";
import { AhpTestClient, contentText, type Envelope } from "../../support/ahp-test-client.js";
import { emulate, PARTIAL_REDRAW, retainedInputs, screenCells, screenText, type EmulatorInput } from "../../support/emulated-screen.js";
import { eventually } from "../../support/eventually.js";
import { useTestGateway, type TestGateway } from "./harness.js";

const gateway = useTestGateway({ scrollbackChars: 1_000_000 });

let counter = 0;
const fresh = (): string => `ahp-terminal:/screen-${++counter}`;
const PAGER = ["env", "TERM=xterm-256color", "LESS=", "less", "/etc/services"];

/** The size the tests' terminals start at. */
const START = { cols: 100, rows: 32 };

/** The screen of a terminal that started at START as the runner's whole retained output, sizes applied where they changed, puts it: what a client that saw everything shows. */
async function liveScreen(at: TestGateway, uri: string): Promise<string[]> {
  const { terminals } = await at.runner.grpc.list({});
  const { id } = terminals.find((terminal) => terminal.labels[LABEL_URI] === uri)!;
  return screenCells(await emulate(START, (await retainedInputs(at.runner.grpc, id)).inputs));
}

/** What a client shows when it starts from `start` in a reset terminal of `size` and applies the actions after `fromSeq`. */
async function replayed(start: string, size: { cols: number; rows: number }, envelopes: readonly Envelope[], channel: string, fromSeq: number): Promise<string[]> {
  const inputs: EmulatorInput[] = [{ output: start }];
  for (const { channel: on, action, serverSeq } of envelopes) {
    if (on !== channel || serverSeq <= fromSeq) continue;
    if (action.type === "terminal/data") inputs.push({ output: action.data as string });
    else if (action.type === "terminal/resized") inputs.push({ resize: { cols: action.cols as number, rows: action.rows as number } });
  }
  return screenCells(await emulate(size, inputs));
}

const envelopesOf = (client: AhpTestClient): Envelope[] =>
  client.frames.filter((frame): frame is { method: string; params: Envelope } => (frame as { method?: string }).method === "action").map((frame) => frame.params);

/** A pager opened at 100x32 and narrowed to 72x20, redrawn at the new size: replaying its transcript at one size garbles it. */
async function resizedPager(owner: AhpTestClient): Promise<string> {
  const uri = fresh();
  await owner.call("createTerminal", { channel: uri, ...START, _meta: { "ahp.argv": PAGER } });
  await owner.call("subscribe", { channel: uri });
  await owner.waitForOutput(uri, /tcpmux/);
  owner.dispatch(uri, { type: "terminal/resized", cols: 72, rows: 20 });
  await eventually(async () => (await liveScreen(gateway, uri)).some((row) => row.startsWith("echo ")));
  return uri;
}

describe("a terminal's screen in its snapshot's _meta, for clients that ask", () => {
  it("stands exactly where the snapshot's content ends: written into a reset terminal, then the later actions, it is the live screen", async () => {
    const owner = await AhpTestClient.initialized(gateway.url);
    const uri = await resizedPager(owner);
    const viewer = await AhpTestClient.initialized(gateway.url);
    const { snapshot } = await viewer.call("subscribe", { channel: uri, _meta: { screen: true } });
    const { screen } = snapshot._meta;
    expect(screen).toMatchObject({ cols: 72, rows: 20, commands: [] });
    // Output after the snapshot: less scrolls by three lines, a partial redraw that keeps the rest of what was there.
    owner.dispatch(uri, { type: "terminal/input", data: "jjj" });
    expect(await eventually(async () => !(await liveScreen(gateway, uri))[0]!.startsWith("# Network services"))).toBe(true);
    const matches = async (): Promise<boolean> =>
      JSON.stringify(await replayed(screen.data, screen, envelopesOf(viewer), uri, snapshot.fromSeq)) === JSON.stringify(await liveScreen(gateway, uri));
    expect(await eventually(matches)).toBe(true);
    owner.close();
    viewer.close();
  });

  it("restores a screen whose transcript, replayed at the new size, puts things elsewhere", async () => {
    const owner = await AhpTestClient.initialized(gateway.url);
    const uri = fresh();
    await owner.call("createTerminal", { channel: uri, ...START, _meta: { "ahp.argv": ["bash", "-c", PARTIAL_REDRAW] } });
    await owner.call("subscribe", { channel: uri });
    await owner.waitForOutput(uri, /low-row/);
    owner.dispatch(uri, { type: "terminal/resized", cols: 72, rows: 20 });
    await owner.waitForOutput(uri, /resized to 20 72/);
    const { snapshot } = await owner.call("subscribe", { channel: uri, _meta: { screen: true } });
    const { screen } = snapshot._meta;
    const live = await liveScreen(gateway, uri);
    expect(screenCells(await emulate(screen, [{ output: screen.data }]))).toEqual(live);
    expect(screenCells(await emulate(snapshot.state, [{ output: contentText(snapshot.state) }]))).not.toEqual(live);
    owner.close();
  });

  it("is left out unless asked for, so standard clients' snapshots stay as they were", async () => {
    const owner = await AhpTestClient.initialized(gateway.url);
    const uri = fresh();
    await owner.call("createTerminal", { channel: uri });
    const { snapshot } = await owner.call("subscribe", { channel: uri });
    expect(snapshot).not.toHaveProperty("_meta");
    expect(Object.keys(snapshot).sort()).toEqual(["fromSeq", "resource", "state"]);
    expect((await owner.call("subscribe", { channel: uri, _meta: { screen: "yes" } })).snapshot).not.toHaveProperty("_meta");
    owner.close();
  });

  it("comes with initialize's initialSubscriptions and reconnect's snapshots, the root's snapshot untouched", async () => {
    const owner = await AhpTestClient.initialized(gateway.url);
    const uri = await resizedPager(owner);
    const clientId = `screens-${Date.now()}`;
    const first = await AhpTestClient.connect(gateway.url);
    const init = await first.call("initialize", { channel: "ahp-root://", protocolVersions: ["0.9.0"], clientId, initialSubscriptions: ["ahp-root://", uri], _meta: { screen: true } });
    const [root, terminal] = init.snapshots;
    expect(root).not.toHaveProperty("_meta");
    expect(terminal._meta.screen).toMatchObject({ cols: 72, rows: 20 });
    expect(screenCells(await emulate(terminal._meta.screen, [{ output: terminal._meta.screen.data }]))).toEqual(await liveScreen(gateway, uri));
    first.close();
    await first.closed();
    const again = await AhpTestClient.connect(gateway.url);
    // A position this gateway never issued: the reply is fresh snapshots.
    const resumed = await again.call("reconnect", { channel: "ahp-root://", clientId, lastSeenServerSeq: 1e12, subscriptions: [uri], _meta: { screen: true } });
    expect(resumed.type).toBe("snapshot");
    const screen = resumed.snapshots[0]._meta.screen;
    expect(screenCells(await emulate(screen, [{ output: screen.data }]))).toEqual(await liveScreen(gateway, uri));
    again.close();
    owner.close();
  });
});

describe("a terminal whose start retention no longer holds", () => {
  const small = useTestGateway({ scrollbackChars: 1_000_000, runner: { retainBytes: 4096 } });

  it("has no screen, and says why: the client falls back to a reset and the transcript", async () => {
    const owner = await AhpTestClient.initialized(small.url);
    const uri = fresh();
    await owner.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "seq 1 3000; echo all-out; sleep 30"] } });
    await owner.call("subscribe", { channel: uri });
    await owner.waitForOutput(uri, /all-out/);
    const { snapshot } = await owner.call("subscribe", { channel: uri, _meta: { screen: true } });
    expect(snapshot._meta).toEqual({ screenUnavailable: expect.stringMatching(/^retention no longer holds the terminal's start: .*no longer retained/) });
    expect(screenText(await emulate({ cols: 80, rows: 24 }, [{ output: contentText(snapshot.state) }]))).toContain("all-out");
    owner.close();
  });
});
