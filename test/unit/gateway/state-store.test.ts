import { describe, expect, it } from "vitest";
import { terminalReducer } from "../../../ahp/terminal-reducer.js";
import type { TerminalAction, TerminalState } from "../../../ahp/types.js";
import { ROOT_URI } from "../../../ahp/types.js";
import { StateStore } from "../../../gateway/state/store.js";
import { RecordingPeer } from "../../support/recording-peer.js";

const uri = "ahp-terminal:/s";

function running(): TerminalState {
  return { title: "sh", cwd: "file:///tmp", cols: 80, rows: 24, content: [], claim: { kind: "client", clientId: "c" }, isPty: true, lifecycle: { status: "running" } };
}

/** A store with one open terminal that printed a line, a subscriber of it and of the root list, and a watcher. */
function storeWithTerminal() {
  const store = new StateStore(10_000, 1_000);
  const peer = new RecordingPeer("c");
  const watched: TerminalAction[] = [];
  store.openTerminal(uri, running(), "token-holder");
  store.channels.subscribe(uri, peer);
  store.channels.subscribe(ROOT_URI, peer);
  store.watch(uri, (action) => watched.push(action));
  store.commit(uri, { type: "terminal/data", data: "hello\r\n" });
  return { store, peer, watched };
}

describe("the state store's one write path", () => {
  it("keeps a terminal closed while running as released, exited the way the reducer exits it, with one new serverSeq for the root list and nothing else told", () => {
    const { store, peer, watched } = storeWithTerminal();
    const before = store.serverSeq;
    const expected = terminalReducer(store.terminalState(uri)!, { type: "terminal/exited", exitCode: 143 });
    const received = peer.frames.length;
    store.closeTerminal(uri, { exitCode: 143 });
    expect(store.endedSnapshot(uri, peer)?.state).toEqual(expected);
    expect(expected).toMatchObject({ exitCode: 143, lifecycle: { status: "exited", exitCode: 143 }, content: [{ type: "unclassified", value: "hello\r\n" }] });
    expect(store.serverSeq).toBe(before + 1);
    expect(peer.envelopes().slice(received).map((envelope) => [envelope.channel, envelope.action.type])).toEqual([[ROOT_URI, "root/terminalsChanged"]]);
    expect(watched.map((action) => action.type)).toEqual(["terminal/data"]);
    expect(store.actions.since(before, new Set([uri, ROOT_URI]))?.map((envelope) => envelope.action.type)).toEqual(["root/terminalsChanged"]);
  });

  it("keeps a terminal whose process had exited as it was: its own exit, not a second one", () => {
    const { store, peer } = storeWithTerminal();
    store.commit(uri, { type: "terminal/exited", exitCode: 0 });
    const exited = store.terminalState(uri);
    store.closeTerminal(uri, { exitCode: 143 });
    expect(store.endedSnapshot(uri, peer)?.state).toEqual(exited);
  });

  it("stamps, keeps for replay and sends a committed action, then the root list when the row changed", () => {
    const { store, peer, watched } = storeWithTerminal();
    const before = store.serverSeq;
    const envelope = store.commit(uri, { type: "terminal/titleChanged", title: "build" }, { origin: { clientId: "c", clientSeq: 4 } });
    expect(envelope).toMatchObject({ serverSeq: before + 1, origin: { clientSeq: 4 } });
    expect(store.serverSeq).toBe(before + 2);
    expect(store.actions.since(before, new Set([uri, ROOT_URI]))?.map((kept) => kept.action.type)).toEqual(["terminal/titleChanged", "root/terminalsChanged"]);
    expect(peer.envelopes().slice(-2).map((sent) => sent.serverSeq)).toEqual([before + 1, before + 2]);
    expect(watched.at(-1)).toEqual({ type: "terminal/titleChanged", title: "build" });
    expect(store.commit("ahp-terminal:/nobody", { type: "terminal/cleared" })).toBeUndefined();
    expect(store.serverSeq).toBe(before + 2);
  });

  it("applies a connection's own config through the root reducer, stamped for it alone and kept from replay", () => {
    const { store, peer } = storeWithTerminal();
    const other = new RecordingPeer("other");
    const before = store.serverSeq;
    store.commitConfig(peer, { type: "root/configChanged", config: { defaultShell: "/bin/bash", x: 1 } }, { clientId: "c", clientSeq: 1 });
    store.commitConfig(peer, { type: "root/configChanged", config: { x: 2 } }, { clientId: "c", clientSeq: 2 });
    expect(store.configOf(peer)).toEqual({ defaultShell: "/bin/bash", x: 2 });
    const replaced = store.commitConfig(peer, { type: "root/configChanged", config: { y: 3 }, replace: true }, { clientId: "c", clientSeq: 3 });
    expect(store.configOf(peer)).toEqual({ y: 3 });
    expect(store.configOf(other)).toEqual({});
    expect(replaced.serverSeq).toBe(before + 3);
    expect(store.actions.since(before, new Set([ROOT_URI]))).toEqual([]);
  });
});
