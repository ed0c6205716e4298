import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { TerminalState } from "../../../ahp/types.js";
import type { GetScreenRequest, GetScreenResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { StateStore } from "../../../gateway/state/store.js";
import { captureScreen } from "../../../gateway/terminals/screen-capture.js";
import type { TerminalLink } from "../../../gateway/terminals/terminal-link.js";

const uri = "ahp-terminal:/screen";

function running(): TerminalState {
  return { title: "sh", cwd: "file:///tmp", cols: 80, rows: 24, content: [], claim: { kind: "client", clientId: "c" }, isPty: true, lifecycle: { status: "running" } };
}

/** A terminal whose runner renders a screen only when the test answers, so output can come in meanwhile. */
function terminalWithSlowRunner() {
  const store = new StateStore(10_000);
  store.openTerminal(uri, running());
  const requests: Array<{ request: Partial<GetScreenRequest>; answer: (response: Partial<GetScreenResponse> | Error) => void }> = [];
  const getScreen = (request: Partial<GetScreenRequest>): Promise<Partial<GetScreenResponse>> =>
    new Promise((resolve, reject) => requests.push({ request, answer: (response) => (response instanceof Error ? reject(response) : resolve(response)) }));
  const link = { uri, runnerId: "r1", outputOffset: 7, runner: { terminals: { getScreen } } } as unknown as TerminalLink;
  const answered = async (index: number, response: Partial<GetScreenResponse> | Error): Promise<void> => {
    while (requests.length <= index) await new Promise((resolve) => setImmediate(resolve));
    requests[index]!.answer(response);
  };
  return { store, link, requests, answered };
}

const screen = { data: "SCREEN", cols: 80, rows: 24, commands: [{ commandId: "c1", line: 3, exitCode: 1 }, { commandId: "c2", line: 5 }] } as unknown as GetScreenResponse;

describe("a screen captured for the next snapshot", () => {
  it("is rendered where the committed output ends, with the events there, and takes in the output committed until the snapshot", async () => {
    const { store, link, requests, answered } = terminalWithSlowRunner();
    const capture = captureScreen(link, store);
    store.commit(uri, { type: "terminal/data", data: "during" });
    await answered(0, screen);
    const captured = await capture;
    store.commit(uri, { type: "terminal/data", data: "+after" });
    expect(requests[0]!.request).toMatchObject({ id: "r1", endOffset: 7n, eventsAtEnd: true, scrollbackLines: 1000 });
    expect(captured.finish(store.terminalState(uri)!)).toEqual({
      screen: { data: "SCREENduring+after", cols: 80, rows: 24, commands: [{ commandId: "c1", line: 3, exitCode: 1 }, { commandId: "c2", line: 5 }] },
    });
    store.commit(uri, { type: "terminal/data", data: "later" });
    expect(captured.finish(store.terminalState(uri)!)).toMatchObject({ screen: { data: "SCREENduring+after" } });
  });

  it("is rendered again when the size changes meanwhile, and given up when it changes before the snapshot", async () => {
    const { store, link, requests, answered } = terminalWithSlowRunner();
    const capture = captureScreen(link, store);
    store.commit(uri, { type: "terminal/resized", cols: 100, rows: 30 });
    await answered(0, screen);
    await answered(1, { ...screen, cols: 100, rows: 30 });
    const captured = await capture;
    expect(requests).toHaveLength(2);
    expect(captured.finish(store.terminalState(uri)!)).toMatchObject({ screen: { cols: 100, rows: 30, data: "SCREEN" } });

    const again = captureScreen(link, store);
    await answered(2, { ...screen, cols: 100, rows: 30 });
    const late = await again;
    store.commit(uri, { type: "terminal/resized", cols: 90, rows: 30 });
    expect(late.finish(store.terminalState(uri)!)).toEqual({ screenUnavailable: "the terminal was resized while its screen was rendered" });
  });

  it("says why there is none: retention, an older runner", async () => {
    const { store, link, answered } = terminalWithSlowRunner();
    const lost = captureScreen(link, store);
    await answered(0, new ConnectError("cannot render the screen: the output before offset 90 is no longer retained", Code.FailedPrecondition));
    expect((await lost).finish(store.terminalState(uri)!)).toEqual({
      screenUnavailable: "retention no longer holds the terminal's start: cannot render the screen: the output before offset 90 is no longer retained",
    });
    const old = captureScreen(link, store);
    await answered(1, new ConnectError("unknown method", Code.Unimplemented));
    expect((await old).finish(store.terminalState(uri)!)).toEqual({ screenUnavailable: "the terminal's runner is too old to render screens" });
  });
});
