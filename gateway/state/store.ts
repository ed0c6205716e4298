import { rootReducer } from "../../ahp/root-reducer.js";
import { shapeRootState, shapeTerminalState } from "../../ahp/shaping.js";
import {
  ROOT_URI,
  type ActionEnvelope,
  type ActionOrigin,
  type RootAction,
  type RootState,
  type Snapshot,
  type StateAction,
  type TerminalAction,
  type TerminalInfo,
  type TerminalState,
  type Uri,
} from "../../ahp/types.js";
import { ActionLog, type ActionHistory } from "./action-log.js";
import { Channels, type Peer } from "./channels.js";
import { EndedTerminals } from "./ended-terminals.js";
import { TerminalRecord, type TerminalSummary } from "./terminal-record.js";
import { TextBlocks } from "./text-blocks.js";

/** Sees every action applied to one terminal. */
export type TerminalWatcher = (action: TerminalAction) => void;

/** A root config change a client dispatched, already checked. */
export type ConfigChange = Extract<RootAction, { type: "root/configChanged" }>;

/** Terminal actions that change the terminal's row in the root list, so the list is sent again after them. */
const ROW_ACTIONS: ReadonlySet<TerminalAction["type"]> = new Set(["terminal/titleChanged", "terminal/claimed", "terminal/exited"]);

/** The root config schema the gateway offers: the shell new terminals of a connection run. */
const ROOT_CONFIG_SCHEMA: NonNullable<RootState["config"]>["schema"] = {
  type: "object",
  properties: {
    defaultShell: { type: "string", title: "Default shell", description: "Absolute path of the shell new terminals run" },
  },
};

/** A terminal's state being rebuilt apart from the one clients see (see `StateStore.rebuild`). */
export interface ContentRebuild {
  /** Applies an action to the state being rebuilt (the terminal's watchers see it; nobody else hears of it). */
  apply(action: TerminalAction): void;
  /** The state being rebuilt, without its content. */
  readonly summary: TerminalSummary;
  /** Puts the rebuilt state in place of the terminal's (keeping its claim, and its title when `keepTitle`); false when the terminal is no longer open. */
  finish(keepTitle: boolean): boolean;
}

/** Who hears of an applied action: the channel's subscribers (and `alsoTo`), the action stamped (with the runner offset output ends at) and kept for replay; or nobody (its channel is being released). */
type Hearing = { origin?: ActionOrigin; alsoTo?: Peer; outputOffset?: number } | "nobody";

/**
 * The gateway's AHP state and its only writer: the root state, every terminal channel's state,
 * each connection's own root config values, and the global `serverSeq`. Every change of a
 * channel's state, whichever method asks for it, is an action applied on one path (`apply`): reduced
 * into its channel's state by the protocol's reducer, then stamped with the next `serverSeq`, kept
 * for `reconnect` and broadcast to the channel's subscribers, in that order, every time. `commit()`
 * is that path for a terminal's actions; opening and closing a terminal take it for the root list
 * (and a closing terminal's exit). Two stamps are for one connection alone and change no channel's
 * state: `commitConfig` (a connection's own config values) and `privateTerminalList`.
 */
export class StateStore {
  private readonly log: ActionLog;
  readonly channels = new Channels((channel) => this.readersChanged(channel));
  private readonly readerListeners = new Set<(uri: Uri, readers: number) => void>();
  /** Terminals that ended and were released, still readable by 1.0 clients for a while. */
  private readonly ended = new EndedTerminals();
  private root: RootState = { agents: [], terminals: [], config: { schema: ROOT_CONFIG_SCHEMA, values: {} } };
  private readonly terminals = new Map<Uri, TerminalRecord>();
  /** Where every terminal's scrollback text is kept. */
  private readonly textBlocks = new TextBlocks();
  private readonly watchers = new Map<Uri, Set<TerminalWatcher>>();
  private readonly configs = new WeakMap<Peer, Record<string, unknown>>();

  /** `serverSeqBase`: the first serverSeq (above every one an earlier gateway issued; 0 for a store of its own). */
  constructor(
    private readonly scrollbackChars: number,
    serverSeqBase = 0,
  ) {
    this.log = new ActionLog(serverSeqBase);
  }

  /** The sequence number of the latest action. */
  get serverSeq(): number {
    return this.log.serverSeq;
  }

  /** What `reconnect` reads of the kept actions: which positions this gateway issued, and what came after one. */
  get actions(): ActionHistory {
    return this.log;
  }

  /** How many terminal channels are open. */
  get terminalCount(): number {
    return this.terminals.size;
  }

  /** True for the root channel and every open terminal. */
  hasChannel(uri: Uri): boolean {
    return uri === ROOT_URI || this.terminals.has(uri);
  }

  /** True when `uri` names an open terminal. */
  isTerminal(uri: Uri): boolean {
    return this.terminals.has(uri);
  }

  /** A terminal's current state, or undefined for a channel that is not an open terminal. */
  terminalState(uri: Uri): TerminalState | undefined {
    return this.terminals.get(uri)?.state;
  }

  /** A terminal's state without its content (cheap: nothing is put together), or undefined. */
  terminalSummary(uri: Uri): TerminalSummary | undefined {
    return this.terminals.get(uri)?.summary;
  }

  /** True while the terminal at `uri` is open and its process runs. */
  isRunning(uri: Uri): boolean {
    return this.terminals.get(uri)?.running ?? false;
  }

  /** Every open terminal's root-list row. */
  terminalRows(): TerminalInfo[] {
    return [...this.terminals.values()].map((record) => record.row());
  }

  /** How many open terminals belong to `owner` (as the runners record it). */
  terminalCountOf(owner: string): number {
    let count = 0;
    for (const record of this.terminals.values()) if (record.owner === owner) count++;
    return count;
  }

  /** Who the open or released terminal at `uri` belongs to; undefined when none was recorded (or nothing is known of it). */
  ownerOf(uri: Uri): string | undefined {
    const record = this.terminals.get(uri);
    return record ? record.owner : this.ended.ownerOf(uri);
  }

  /** A connection's own root config values (such as `defaultShell`); nobody else sees them. */
  configOf(peer: Peer): Readonly<Record<string, unknown>> {
    return this.configs.get(peer) ?? {};
  }

  /**
   * A channel's state as one connection sees it (its version's shape, its own config values, the
   * terminals it may list), or undefined for an unknown channel.
   */
  snapshot(uri: Uri, peer: Peer): Snapshot | undefined {
    const fromSeq = this.log.serverSeq;
    if (uri === ROOT_URI) {
      const config = this.root.config && { ...this.root.config, values: { ...this.configOf(peer) } };
      const terminals = this.root.terminals?.filter((row) => peer.lists(this.ownerOf(row.resource)));
      return { resource: uri, state: shapeRootState({ ...this.root, terminals, ...(config ? { config } : {}) }, peer.features), fromSeq };
    }
    const record = this.terminals.get(uri);
    return record && { resource: uri, state: shapeTerminalState(record.state, peer.features), fromSeq };
  }

  /** A released terminal's exited state as one connection sees it, or undefined when none is kept at `uri`. */
  endedSnapshot(uri: Uri, peer: Peer): Snapshot | undefined {
    const state = this.terminals.has(uri) ? undefined : this.ended.get(uri);
    return state && { resource: uri, state: shapeTerminalState(state, peer.features), fromSeq: this.log.serverSeq };
  }

  /** Opens a terminal channel with its first state and its owner (undefined: none recorded), and lists it on the root channel. */
  openTerminal(uri: Uri, initial: TerminalState, owner?: string): void {
    this.ended.forget(uri);
    this.terminals.set(uri, new TerminalRecord(uri, initial, this.scrollbackChars, this.textBlocks, owner));
    this.commitTerminalList();
  }

  /**
   * Closes a terminal channel: nothing more is sent on it, and it leaves the root list. Its state
   * is kept as a released terminal, exited with `exit` when its process had not reported an exit
   * (applied like any exit, heard by nobody: the channel goes with it).
   */
  closeTerminal(uri: Uri, exit: { exitCode?: number } = {}): void {
    const record = this.terminals.get(uri);
    if (!record) return;
    if (record.running) this.apply(uri, { type: "terminal/exited", exitCode: exit.exitCode }, "nobody");
    this.terminals.delete(uri);
    this.ended.keep(uri, record.state, record.owner);
    record.clearContent();
    this.watchers.delete(uri);
    this.channels.drop(uri);
    this.log.forget(uri);
    this.commitTerminalList();
  }

  /** Calls `watcher` with every action applied to the terminal from now on, until the returned function is called. */
  watch(uri: Uri, watcher: TerminalWatcher): () => void {
    let set = this.watchers.get(uri);
    if (!set) this.watchers.set(uri, (set = new Set()));
    set.add(watcher);
    this.readersChanged(uri);
    return () => {
      if (set.delete(watcher)) this.readersChanged(uri);
    };
  }

  /** Who reads a terminal here: its subscribers and its watchers. */
  readers(uri: Uri): number {
    return this.channels.subscriberCount(uri) + (this.watchers.get(uri)?.size ?? 0);
  }

  /** Calls `listener` whenever the number of a channel's readers (subscribers and watchers) changes. */
  onReadersChanged(listener: (uri: Uri, readers: number) => void): void {
    this.readerListeners.add(listener);
  }

  /**
   * Starts rebuilding an open terminal's state apart from the one clients see, from `start` (its
   * content empty): the actions applied to it reach the terminal's watchers only, and `finish` puts
   * it in place at once, a restart of the channel's history (no reconnect replays across it).
   * Undefined when the terminal is not open.
   */
  rebuild(uri: Uri, start: TerminalState): ContentRebuild | undefined {
    if (!this.terminals.has(uri)) return undefined;
    const shadow = new TerminalRecord(uri, { ...start, content: [] }, this.scrollbackChars, this.textBlocks);
    return {
      apply: (action) => {
        shadow.apply(action);
        for (const watcher of this.watchers.get(uri) ?? []) watcher(action);
      },
      get summary() {
        return shadow.summary;
      },
      finish: (keepTitle) => {
        const current = this.terminals.get(uri);
        if (!current) return false;
        const rebuilt = shadow.withRowOf(current, keepTitle);
        const before = JSON.stringify(current.row());
        this.terminals.set(uri, rebuilt);
        current.clearContent();
        this.log.restart(uri);
        if (JSON.stringify(rebuilt.row()) !== before) this.commitTerminalList();
        return true;
      },
    };
  }

  /** Drops an open terminal's content (nobody here reads it; it is rebuilt when someone does). */
  clearContent(uri: Uri): void {
    this.terminals.get(uri)?.clearContent();
  }

  /**
   * Applies an action to an open terminal, stamps it, keeps it for replay and broadcasts it to the
   * terminal's subscribers and to `alsoTo` (the client that dispatched it); the root list follows
   * when the terminal's row changed. Output carries `outputOffset`, where the terminal's text ends after
   * it in the runner (docs/ahp.md, `_meta.offsets`). Undefined when the terminal is not open.
   */
  commit(uri: Uri, action: TerminalAction, options: { origin?: ActionOrigin; alsoTo?: Peer; outputOffset?: number } = {}): ActionEnvelope | undefined {
    return this.terminals.has(uri) ? this.apply(uri, action, options) : undefined;
  }

  /**
   * Applies a root config change to one connection's own values (by the root reducer, on that
   * connection's view of the config) and echoes it to that connection alone: the sequence advances,
   * nothing is kept for replay (nobody else may see it), and no channel's state changes.
   */
  commitConfig(peer: Peer, change: ConfigChange, origin: ActionOrigin): ActionEnvelope {
    const own = rootReducer({ agents: [], config: { schema: ROOT_CONFIG_SCHEMA, values: { ...this.configOf(peer) } } }, change);
    this.configs.set(peer, own.config!.values);
    return this.log.stampPrivate(ROOT_URI, change, origin);
  }

  /**
   * The root list stamped for one connection alone (its view of who may be listed changed: it signed
   * in or out, or its grants changed): the sequence advances, nothing is kept for replay, and no state changes.
   */
  privateTerminalList(): ActionEnvelope {
    return this.log.stampPrivate(ROOT_URI, { type: "root/terminalsChanged", terminals: this.terminalRows() });
  }

  private readersChanged(uri: Uri): void {
    const readers = this.readers(uri);
    for (const listener of this.readerListeners) listener(uri, readers);
  }

  private commitTerminalList(): void {
    this.apply(ROOT_URI, { type: "root/terminalsChanged", terminals: this.terminalRows() }, {});
  }

  /**
   * The one path by which a channel's AHP state changes: the action is reduced into the root state
   * or the open terminal's record and, unless nobody is to hear of it, the terminal's watchers see
   * it, it is stamped, kept for replay and broadcast, and the root list follows a change of the
   * terminal's row.
   */
  private apply(uri: Uri, action: StateAction, hearing: Hearing): ActionEnvelope | undefined {
    const record = uri === ROOT_URI ? undefined : this.terminals.get(uri)!;
    if (record) record.apply(action as TerminalAction);
    else this.root = rootReducer(this.root, action);
    if (hearing === "nobody") return undefined;
    if (record) for (const watcher of this.watchers.get(uri) ?? []) watcher(action as TerminalAction);
    const envelope = this.log.append(uri, action, hearing.origin, hearing.outputOffset);
    this.channels.broadcast(envelope, hearing.alsoTo);
    if (record && ROW_ACTIONS.has(action.type as TerminalAction["type"])) this.commitTerminalList();
    return envelope;
  }
}
