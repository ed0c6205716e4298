import { describe, expect, it } from "vitest";
import { LABEL_URI } from "../../../gateway/runners/runner-labels.js";
import { AhpTestClient, contentText, rpcErrorOf, type Envelope } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { useTestGateway, type TestGateway } from "./harness.js";

const gateway = useTestGateway({ runner: { retainBytes: 16 * 1024 * 1024 } });

let counter = 0;
const fresh = (): string => `ahp-terminal:/offsets-${++counter}`;

/** An envelope as it came over the wire, `_meta` included. */
type WireEnvelope = Envelope & { _meta?: { offset?: number } };

/** A connected client initialized with `meta` as its `_meta`; returns the client and the initialize result. */
async function initialized(at: TestGateway, meta: Record<string, unknown> = {}, options: { subscribe?: string[]; versions?: string[]; clientId?: string } = {}): Promise<{ client: AhpTestClient; result: any }> {
  const client = await AhpTestClient.connect(at.url);
  const result = await client.call("initialize", {
    channel: "ahp-root://",
    protocolVersions: options.versions ?? ["1.0.0"],
    clientId: options.clientId ?? `offsets-${Math.random().toString(36).slice(2)}`,
    initialSubscriptions: options.subscribe ?? [],
    _meta: meta,
  });
  return { client, result };
}

/** The `terminal/data` envelopes a client got on a channel, as they came. */
function dataOn(client: AhpTestClient, channel: string): WireEnvelope[] {
  return (client.envelopes() as WireEnvelope[]).filter((envelope) => envelope.channel === channel && envelope.action.type === "terminal/data");
}

/** The runner's end offset of the terminal at `uri`. */
async function runnerEnd(at: TestGateway, uri: string): Promise<number> {
  const { terminals } = await at.runner.grpc.list({});
  return Number(terminals.find((terminal) => terminal.labels[LABEL_URI] === uri)!.endOffset);
}

const exited = (client: AhpTestClient, uri: string): Promise<Envelope> =>
  client.waitForEnvelope((envelope) => envelope.channel === uri && envelope.action.type === "terminal/exited", 20_000);

/** `seq from to` as a pty shows it. */
const lines = (from: number, to: number): string => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\r\n`).join("");

describe("output offsets (_meta.offsets)", () => {
  it("mark each output envelope with where its text ends in the runner, exactly, for the connections that asked and no others", async () => {
    const uri = fresh();
    const { client: asked } = await initialized(gateway, { offsets: true });
    const { client: plain } = await initialized(gateway);
    await asked.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "sleep 0.5; seq 1 30000; sleep 0.2"] } });
    // Held up to 20 ms and merged: a merged envelope ends where its last part did.
    const { snapshot } = await asked.call("subscribe", { channel: uri, delivery: { maxLatencyMs: 20 } });
    const plainSnapshot = (await plain.call("subscribe", { channel: uri })).snapshot;
    await Promise.all([exited(asked, uri), exited(plain, uri)]);
    let end = snapshot._meta.offset as number;
    expect(end).toBe(Buffer.byteLength(contentText(snapshot.state)));
    const received = dataOn(asked, uri).filter((envelope) => envelope.serverSeq > snapshot.fromSeq);
    for (const envelope of received) {
      end += Buffer.byteLength(envelope.action.data as string);
      expect(envelope._meta).toEqual({ offset: end });
    }
    expect(end).toBe(await runnerEnd(gateway, uri));
    expect(contentText(snapshot.state) + received.map((envelope) => envelope.action.data).join("")).toBe(lines(1, 30000));
    expect(plainSnapshot).not.toHaveProperty("_meta");
    expect(dataOn(plain, uri).length).toBeGreaterThan(0);
    expect(dataOn(plain, uri).filter((envelope) => "_meta" in envelope)).toEqual([]);
    asked.close();
    plain.close();
  });

  it("end before the first bytes of a character split across reads, which come with the rest of it", async () => {
    const uri = fresh();
    const { client } = await initialized(gateway, { offsets: true });
    await client.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "sleep 0.3; printf 'a\\342'; sleep 1; printf '\\202\\254b'; sleep 0.2"] } });
    await client.call("subscribe", { channel: uri });
    await eventually(async () => (await runnerEnd(gateway, uri)) === 2);
    const { client: late, result } = await initialized(gateway, { offsets: true, resumeFrom: { [uri]: 1 } }, { subscribe: [uri] });
    const [midway] = result.snapshots;
    expect(contentText(midway.state)).toBe("a");
    expect(midway._meta).toMatchObject({ offset: 1, resume: { from: 1, data: "" } });
    await exited(client, uri);
    expect(dataOn(client, uri).map(({ action, _meta }) => [action.data, _meta?.offset])).toEqual([
      ["a", 1],
      ["€b", 5],
    ]);
    expect(dataOn(late, uri).map(({ action, _meta }) => [action.data, _meta?.offset])).toEqual([["€b", 5]]);
    client.close();
    late.close();
  });

  it("are carried by a reconnect's replay, and left out of windowed subscriptions, whose messages are cut for them (only the last piece has the offset)", async () => {
    const uri = fresh();
    const clientId = `replayed-${Math.random().toString(36).slice(2)}`;
    const { client: first } = await initialized(gateway, { offsets: true }, { clientId, versions: ["1.1.0"] });
    const { client: windowed } = await initialized(gateway, {}, { versions: ["1.1.0"] });
    await first.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "sleep 0.5; seq 1 3000; read go; seq 5001 6000; sleep 30"] } });
    await windowed.subscribeWindowed(uri, { windowBytes: 1024 * 1024, maximumFrameBytes: 4096, maximumMessageBytes: 4096 });
    const { snapshot } = await first.call("subscribe", { channel: uri });
    await first.waitForOutput(uri, /3000\r\n/);
    let end = snapshot._meta.offset as number;
    const pieces = dataOn(first, uri).filter((envelope) => envelope.serverSeq > snapshot.fromSeq);
    for (const envelope of pieces) {
      end += Buffer.byteLength(envelope.action.data as string);
      if (envelope._meta) expect(envelope._meta).toEqual({ offset: end });
    }
    expect(pieces.some((envelope) => !envelope._meta)).toBe(true);
    expect(pieces.at(-1)!._meta).toEqual({ offset: end });
    expect(windowed.frames.filter((frame) => JSON.stringify(frame).includes('"_meta":{"offset"'))).toEqual([]);
    const seen = first.lastSeenServerSeq;
    first.close();
    windowed.close();
    await first.closed();
    const second = await AhpTestClient.connect(gateway.url);
    const { client: other } = await initialized(gateway);
    other.dispatch(uri, { type: "terminal/input", data: "go\r" });
    await eventually(async () => (await runnerEnd(gateway, uri)) > end + 4000);
    const replay = await second.reconnect({ clientId, lastSeenServerSeq: seen, subscriptions: [uri], _meta: { offsets: true } });
    expect(replay.type).toBe("replay");
    const replayed = (replay.actions as WireEnvelope[]).filter((envelope) => envelope.action.type === "terminal/data");
    expect(replayed.length).toBeGreaterThan(0);
    for (const envelope of replayed) {
      end += Buffer.byteLength(envelope.action.data as string);
      if (envelope._meta) expect(envelope._meta).toEqual({ offset: end });
    }
    expect(replayed.at(-1)!._meta?.offset).toBe(end);
    second.close();
    other.close();
  });
});

describe("resuming from an offset (_meta.resumeFrom)", () => {
  it("gives exactly the output between the offset and where the snapshot ends, under a running flood", async () => {
    const uri = fresh();
    // A steady flood (a hundred lines per process started), so output is committed while the resume is read.
    const flood = "sleep 0.5; for b in $(seq 0 1499); do seq $((b*100+1)) $((b*100+100)); done; sleep 0.2";
    const { client: before } = await initialized(gateway, { offsets: true });
    await before.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", flood] } });
    const { snapshot: first } = await before.call("subscribe", { channel: uri });
    await before.waitForOutput(uri, /\r\n2\d{4}\r\n/, 20_000);
    before.close();
    await before.closed();
    const had = dataOn(before, uri).filter((envelope) => envelope.serverSeq > first.fromSeq);
    const from = had.at(-1)!._meta!.offset!;
    const seen = contentText(first.state) + had.map((envelope) => envelope.action.data).join("");
    expect(Buffer.byteLength(seen)).toBe(from);
    // Far enough behind that reading the range takes a while.
    await new Promise((resolve) => setTimeout(resolve, 200));

    // With a screen too, as the clients ask: both follow the terminal until the snapshot is taken.
    const { client: after, result } = await initialized(gateway, { offsets: true, screen: true, resumeFrom: { [uri]: from } }, { subscribe: [uri] });
    const [snapshot] = result.snapshots;
    const { resume, offset } = snapshot._meta;
    expect(resume.from).toBe(from);
    expect(Buffer.byteLength(resume.data)).toBe(offset - from);
    await exited(after, uri);
    const later = dataOn(after, uri).filter((envelope) => envelope.serverSeq > snapshot.fromSeq);
    // The flood went on after the snapshot: the resume was read while output was being committed.
    expect(later.length).toBeGreaterThan(0);
    expect(seen + resume.data + later.map((envelope) => envelope.action.data).join("")).toBe(lines(1, 150_000));
    after.close();
  });

  it("says why it cannot resume: an offset past the end, a clear in between, a released terminal", async () => {
    const uri = fresh();
    const { client } = await initialized(gateway, { offsets: true }, { versions: ["1.0.0"] });
    await client.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "seq 1 100; read go; seq 101 200; sleep 30"] } });
    await client.subscribeUntil(uri, /100\r\n/);
    const at = dataOn(client, uri).at(-1)?._meta?.offset ?? (await runnerEnd(gateway, uri));
    const past = await client.call("subscribe", { channel: uri, _meta: { resumeFrom: { [uri]: 10 ** 12 } } });
    expect(past.snapshot._meta.resumeUnavailable).toMatch(/offset 1000000000000 is past the end of the terminal's output/);
    const now = await client.call("subscribe", { channel: uri, _meta: { resumeFrom: { [uri]: at } } });
    expect(now.snapshot._meta.resume).toEqual({ from: at, data: "" });

    client.dispatch(uri, { type: "terminal/cleared" });
    await client.waitForEnvelope((envelope) => envelope.channel === uri && envelope.action.type === "terminal/cleared");
    client.dispatch(uri, { type: "terminal/input", data: "go\r" });
    await client.waitForOutput(uri, /200\r\n/);
    const cleared = await client.call("subscribe", { channel: uri, _meta: { resumeFrom: { [uri]: at } } });
    expect(cleared.snapshot._meta.resumeUnavailable).toBe("the terminal was cleared");

    await client.call("disposeTerminal", { channel: uri });
    const { client: late, result } = await initialized(gateway, { resumeFrom: { [uri]: at } }, { subscribe: [uri], versions: ["1.0.0"] });
    expect(result.snapshots[0]._meta).toEqual({ resumeUnavailable: "the terminal has been released" });
    client.close();
    late.close();
  });

  it("refuses a resumeFrom that is not a map of non-negative integer offsets with -32602, changing nothing", async () => {
    const uri = fresh();
    const { client } = await initialized(gateway);
    await client.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sleep", "30"] } });
    for (const resumeFrom of [[1], 5, "x", null, { [uri]: -1 }, { [uri]: 1.5 }, { [uri]: "3" }]) {
      const error = await rpcErrorOf(client.call("subscribe", { channel: uri, _meta: { resumeFrom } }));
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(/^subscribe: _meta\.resumeFrom/);
    }
    const fresh2 = await AhpTestClient.connect(gateway.url);
    const error = await rpcErrorOf(fresh2.call("initialize", { channel: "ahp-root://", protocolVersions: ["1.0.0"], clientId: "bad-resume", _meta: { resumeFrom: { [uri]: -5 } } }));
    expect(error).toMatchObject({ code: -32602, message: `initialize: _meta.resumeFrom[${JSON.stringify(uri)}] must be a non-negative integer offset, got -5` });
    // Nothing was negotiated: the connection still needs a handshake.
    expect((await rpcErrorOf(fresh2.call("subscribe", { channel: uri }))).code).not.toBe(-32602);
    await client.call("disposeTerminal", { channel: uri });
    client.close();
    fresh2.close();
  });
});
