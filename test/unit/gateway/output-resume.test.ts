import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { TerminalState } from "../../../ahp/types.js";
import type { AttachRequest } from "../../../gen/terminal/v1/terminal_pb.js";
import { StateStore } from "../../../gateway/state/store.js";
import { fetchResume, MAX_RESUME_BYTES } from "../../../gateway/terminals/output-resume.js";
import { MAX_TAPPED_CHARS } from "../../../gateway/terminals/output-tap.js";
import type { TerminalLink } from "../../../gateway/terminals/terminal-link.js";

const uri = "ahp-terminal:/resume";

function running(): TerminalState {
  return { title: "sh", cwd: "file:///tmp", cols: 80, rows: 24, content: [], claim: { kind: "client", clientId: "c" }, isPty: true, lifecycle: { status: "running" } };
}

type Event = { case: "output"; value: { data: Uint8Array; endOffset: bigint } } | { case: "gap"; value: { fromOffset: bigint; toOffset: bigint } } | { case: "cleared"; value: object } | Error;

/** A terminal whose runner sends the events of each Attach only when the test pushes them, so output can be committed meanwhile. */
function terminalWithSlowRunner(outputOffset: number) {
  const store = new StateStore(10_000);
  store.openTerminal(uri, running());
  const requests: Array<Partial<AttachRequest>> = [];
  const queue: Event[] = [];
  let wake: (() => void) | undefined;
  async function* attach(request: Partial<AttachRequest>): AsyncGenerator<{ event: Exclude<Event, Error> }> {
    requests.push(request);
    for (;;) {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const next = queue.shift()!;
      if (next instanceof Error) throw next;
      yield { event: next };
    }
  }
  const link = { uri, runnerId: "r1", outputOffset, runner: { terminals: { attach } } } as unknown as TerminalLink;
  const push = (...events: Event[]): void => {
    queue.push(...events);
    wake?.();
  };
  return { store, link, requests, push };
}

const output = (text: string, endOffset: number): Event => ({ case: "output", value: { data: Buffer.from(text), endOffset: BigInt(endOffset) } });

describe("output read for a client resuming from an offset", () => {
  it("is read from the offset up to where the committed output ends, and takes in the output committed until the snapshot", async () => {
    const { store, link, requests, push } = terminalWithSlowRunner(10);
    const fetching = fetchResume(link, store, 4);
    store.commit(uri, { type: "terminal/data", data: "during" });
    push(output("efg", 7), output("hij", 10));
    const fetched = await fetching;
    store.commit(uri, { type: "terminal/data", data: "+after" });
    expect(requests).toEqual([{ id: "r1", fromOffset: 4n, untilOffset: 10n, follow: true, stripShellMarks: true }]);
    expect(fetched.finish()).toEqual({ resume: { from: 4, data: "efghijduring+after" } });
    store.commit(uri, { type: "terminal/data", data: "later" });
    expect(fetched.finish()).toEqual({ resume: { from: 4, data: "efghijduring+after" } });
  });

  it("asks the runner nothing when the client has everything, and says so for an offset past the end or too far behind", async () => {
    const { store, link, requests } = terminalWithSlowRunner(10);
    expect((await fetchResume(link, store, 10)).finish()).toEqual({ resume: { from: 10, data: "" } });
    expect((await fetchResume(link, store, 11)).finish()).toEqual({ resumeUnavailable: "offset 11 is past the end of the terminal's output (10)" });
    link.outputOffset = MAX_RESUME_BYTES + 11;
    expect((await fetchResume(link, store, 10)).finish().resumeUnavailable).toMatch(/^more than 4194304 bytes of output came after offset 10/);
    expect(requests).toEqual([]);
  });

  it("gives up on a range retention no longer holds, one a clear dropped, and a clear or a flood before the snapshot", async () => {
    const evicted = terminalWithSlowRunner(10);
    evicted.push({ case: "gap", value: { fromOffset: 2n, toOffset: 6n } }, output("ghij", 10));
    expect((await fetchResume(evicted.link, evicted.store, 2)).finish()).toEqual({ resumeUnavailable: "retention no longer holds offset 2 (the runner's output now starts at 6)" });

    const cleared = terminalWithSlowRunner(10);
    cleared.push({ case: "gap", value: { fromOffset: 2n, toOffset: 6n } }, { case: "cleared", value: {} }, output("ghij", 10));
    expect((await fetchResume(cleared.link, cleared.store, 2)).finish()).toEqual({ resumeUnavailable: "the terminal was cleared" });

    const clearedMeanwhile = terminalWithSlowRunner(10);
    const fetching = fetchResume(clearedMeanwhile.link, clearedMeanwhile.store, 2);
    clearedMeanwhile.store.commit(uri, { type: "terminal/cleared" });
    clearedMeanwhile.push(output("cdefghij", 10));
    expect((await fetching).finish()).toEqual({ resumeUnavailable: "the terminal was cleared" });

    const flooded = terminalWithSlowRunner(10);
    const flooding = fetchResume(flooded.link, flooded.store, 2);
    flooded.store.commit(uri, { type: "terminal/data", data: "x".repeat(MAX_TAPPED_CHARS + 1) });
    flooded.push(output("cdefghij", 10));
    expect((await flooding).finish()).toEqual({ resumeUnavailable: "the output moved on faster than it was read" });
  });

  it("says when the runner cannot send the range: it lost the terminal, fails, or does not stop at the offset", async () => {
    const lost = terminalWithSlowRunner(10);
    lost.push(new ConnectError("no terminal r1", Code.NotFound));
    expect((await fetchResume(lost.link, lost.store, 2)).finish()).toEqual({ resumeUnavailable: "the runner no longer has this terminal" });
    const failing = terminalWithSlowRunner(10);
    failing.push(output("cd", 4), new ConnectError("connection reset", Code.Unavailable));
    expect((await fetchResume(failing.link, failing.store, 2)).finish()).toEqual({ resumeUnavailable: "the runner could not send the output: connection reset" });
    const older = terminalWithSlowRunner(10);
    older.push(output("cdefghijkl", 12));
    expect((await fetchResume(older.link, older.store, 2)).finish()).toEqual({ resumeUnavailable: "the terminal's runner is too old to send a range of output" });
  });

  it("decodes whole characters that the runner sent split across events", async () => {
    const { store, link, push } = terminalWithSlowRunner(7);
    const euro = Buffer.from("€");
    push({ case: "output", value: { data: Buffer.concat([Buffer.from("a"), euro.subarray(0, 1)]), endOffset: 3n } }, { case: "output", value: { data: Buffer.concat([euro.subarray(1), Buffer.from("bc")]), endOffset: 7n } });
    expect((await fetchResume(link, store, 1)).finish()).toEqual({ resume: { from: 1, data: "a€bc" } });
  });
});
