import { pathToFileURL } from "node:url";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorCode } from "../../ahp/error-codes.js";
import { dataWithin } from "../../ahp/escaped-split.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { sameClaim } from "../../ahp/claims.js";
import type { TerminalAction, TerminalClaim, Uri } from "../../ahp/types.js";
import { ChangeKind, TerminalState as RunnerTerminalState, type TerminalInfo as RunnerTerminalInfo } from "../../gen/terminal/v1/terminal_pb.js";
import type { Logger } from "../../lib/logger.js";
import { titleFromProgram } from "../../lib/titles.js";
import type { StateStore, TerminalWatcher } from "../state/store.js";
import type { Runner } from "../runners/runner-client.js";
import { isRunnerUnreachable, jsonRpcErrorFromRunner } from "../runners/runner-errors.js";
import { claimFromLabel, LABEL_CLAIM, LABEL_OWNER, LABEL_TITLE, LABEL_URI, labelsFor } from "../runners/runner-labels.js";
import { placementOrder, ranksBefore } from "../runners/placement.js";
import type { RunnerPool } from "../runners/runner-pool.js";
import type { RunnerRecordSink } from "../runners/runner-watch.js";
import { Rebuilds } from "./rebuilds.js";
import { writeLabelConditionally, type LabelAction } from "./label-writes.js";
import { TerminalFollow, isRepeat } from "./terminal-follow.js";
import { exitOf, stateFromRecord } from "./terminal-state-from-record.js";
import { TerminalLink } from "./terminal-link.js";
import { inCreateTerminalSpan } from "./terminal-span.js";

/** A `createTerminal` after its parameters were checked. */
export interface CreateTerminalRequest {
  uri: Uri;
  claim: TerminalClaim;
  /** Who it belongs to (kept in the runner's labels): decides who may reach it. */
  owner: string;
  /** The shell to run; the runner's own when absent. */
  shell?: string;
  /** True to have the runner check `shell` at this spawn (it was named earlier, and may have changed since). */
  checkShell?: boolean;
  /** The Unix account the process runs as; the runner's own when absent. */
  runAs?: string;
  /** A program and its arguments, run word by word (instead of an interactive shell). */
  argv?: string[];
  /** A shell line handed to the shell as is (instead of an interactive shell). */
  command?: string;
  /** The client's terminal type (TERM), used where the runner's host describes it. */
  term?: string;
  env?: Record<string, string>;
  name?: string;
  cwd?: string;
  cols: number;
  rows: number;
  /** Sees every action applied to the terminal, from the first one. */
  watch?: TerminalWatcher;
}

/** What the open terminals need: the state it writes through, its runners (none for a host that serves no terminals), and where terminals start. */
export interface OpenTerminalsOptions {
  store: StateStore;
  runners: RunnerPool | undefined;
  log: Logger;
  defaultDirectory: string;
  /** Called with a terminal's last working directory when its process exits (a host refreshes that directory's changes). */
  onTerminalExit?: (cwd: string) => void;
  /** The longest a request waits for a terminal's state to be rebuilt (default REBUILD_WAIT_MS). */
  rebuildWaitMs?: number;
  /** How long a terminal nobody reads here is still followed (default FOLLOW_GRACE_MS). */
  followGraceMs?: number;
}

/**
 * The terminals this gateway serves, as the runners record them: every runner's terminals that
 * carry an AHP URI are open channels here, kept from each runner's Watch stream (claim, title,
 * owner, size, cwd and exit come from the runner's record, so every gateway over the same runners
 * lists and describes them alike). Creates terminals on the runner their URI ranks first, changes
 * claims and titles by conditional writes to the record, and follows a terminal's output (building
 * its AHP content from the runner's retained log) only while someone reads it through this gateway.
 */
export class OpenTerminals implements RunnerRecordSink {
  private readonly links = new Map<Uri, TerminalLink>();
  private readonly creating = new Set<Uri>();
  private readonly rebuilds: Rebuilds;

  constructor(private readonly options: OpenTerminalsOptions) {
    this.rebuilds = new Rebuilds(options.log, options.rebuildWaitMs);
    options.store.onReadersChanged((uri, readers) => this.links.get(uri)?.follow.readersChanged(readers));
  }

  /** True when this host has runners, so it can open terminals. */
  get servesTerminals(): boolean {
    return this.options.runners !== undefined;
  }

  /** True when terminals can be opened now: at least one runner answers its health check (always true without runners). */
  ready(timeoutMs: number): Promise<boolean> {
    return this.options.runners ? this.options.runners.ready(timeoutMs) : Promise.resolve(true);
  }

  /** The open terminal's link at `uri`, or undefined. */
  linkAt(uri: Uri): TerminalLink | undefined {
    return this.links.get(uri);
  }

  /** How many terminals this gateway follows the output of now. */
  get followedCount(): number {
    let count = 0;
    for (const link of this.links.values()) if (link.follow.active) count++;
    return count;
  }

  /**
   * Resolves once the state of the open terminals among `uris` is whole: those not followed yet
   * start being followed and are rebuilt from the runner's retained log (a request waits at most
   * REBUILD_WAIT_MS for one, then serves it as far as it got).
   */
  async caughtUp(uris: Iterable<Uri>): Promise<void> {
    const open = [...uris].filter((uri) => this.links.has(uri));
    for (const uri of open) void this.links.get(uri)!.follow.ensure();
    await this.rebuilds.wait(open);
  }

  /**
   * Spawns a terminal under the given URI on the runner the URI ranks first (the next one when a
   * runner cannot be reached or is full) and lists it on the root channel. The runner refuses a
   * second terminal with the same URI, so of two gateways creating it at once exactly one succeeds.
   */
  create(request: CreateTerminalRequest): Promise<TerminalLink> {
    return inCreateTerminalSpan(request.uri, () => this.spawnPlaced(request));
  }

  private async spawnPlaced(request: CreateTerminalRequest): Promise<TerminalLink> {
    const { uri } = request;
    const pool = this.options.runners;
    if (!pool) throw new JsonRpcError(ErrorCode.MethodNotFound, "This host does not serve createTerminal yet");
    if (this.options.store.hasChannel(uri) || this.creating.has(uri)) {
      throw new JsonRpcError(ErrorCode.AlreadyExists, `A channel already exists at ${uri}`);
    }
    this.creating.add(uri);
    try {
      const spawn = {
        title: request.name,
        shell: request.shell,
        checkShell: request.checkShell ?? false,
        runAs: request.runAs ?? "",
        argv: request.argv,
        command: request.command,
        term: request.term ?? "",
        env: request.env,
        // A terminal run as an account starts in that account's home (the runner's choice), not in the gateway's.
        cwd: request.cwd ?? (request.runAs ? undefined : this.options.defaultDirectory),
        cols: request.cols,
        rows: request.rows,
        labels: labelsFor(uri, request.claim, request.name, request.owner),
        uniqueLabel: LABEL_URI,
      };
      let lastError: unknown = new Error("no runner is configured");
      for (const runner of placementOrder(uri, pool.list())) {
        try {
          const { terminal: info } = await runner.terminals.spawn(spawn);
          const link = this.take(runner, info!);
          if (!link) throw new JsonRpcError(ErrorCode.AlreadyExists, `A channel already exists at ${uri}`);
          // Its creator usually reads it next: followed from its first byte, live, and let go after the grace if nobody does.
          void link.follow.ensure(true);
          if (request.watch) this.options.store.watch(uri, request.watch);
          this.options.log.info({ uri, runner: runner.url, runnerId: link.runnerId, pid: info!.pid }, "terminal created");
          return link;
        } catch (err) {
          if (err instanceof JsonRpcError) throw err;
          lastError = err;
          const { code } = ConnectError.from(err);
          if (code === Code.AlreadyExists) throw new JsonRpcError(ErrorCode.AlreadyExists, `A channel already exists at ${uri} (another gateway created it)`);
          // A runner that is down, or full (out of descriptors, spawns queued to its limit), leaves the terminal to the next one.
          const full = code === Code.ResourceExhausted;
          if (!full && !isRunnerUnreachable(err)) break;
          this.options.log.warn({ runner: runner.url, err: ConnectError.from(err).message }, full ? "runner is full; trying the next" : "runner unreachable; trying the next");
        }
      }
      throw jsonRpcErrorFromRunner(lastError, "create the terminal");
    } finally {
      this.creating.delete(uri);
    }
  }

  /** A runner's whole record (its Watch stream began, or resumed after the runner restarted): its terminals with a URI are open here, and those it no longer has are gone. */
  listed(runner: Runner, terminals: readonly RunnerTerminalInfo[], restarted: boolean): void {
    const held = new Set(terminals.map((info) => info.id));
    for (const link of [...this.links.values()]) {
      if (link.runner !== runner || held.has(link.runnerId)) continue;
      // Died with a runner that restarted: reported exited, and listed until disposed, so its clients see how it ended.
      if (restarted) this.diedWithRunner(link);
      // Otherwise gone (closed while this gateway was not watching), unless it was spawned here after the list was taken.
      else void this.releaseWhenGone(link);
    }
    for (const info of terminals) this.take(runner, info);
  }

  /** One change to a runner terminal's record: its channel opens, follows the change, or closes. */
  changed(runner: Runner, kind: ChangeKind, info: RunnerTerminalInfo): void {
    const link = this.links.get(info.labels[LABEL_URI] ?? "");
    const ours = link && link.runner === runner && link.runnerId === info.id ? link : undefined;
    if (kind === ChangeKind.CLOSED) {
      if (ours) this.release(ours, { exitCode: info.exitCode }, "closed");
      return;
    }
    this.take(runner, info);
    if (kind === ChangeKind.EXITED && ours) this.exitHook(ours.uri, info.cwd);
  }

  /**
   * Ends a terminal's process in the runner and removes it; -32008 for an unknown URI. Its final
   * state is kept a while as a released terminal (with the exit the runner reported on closing,
   * when the process had not reported one).
   */
  async dispose(uri: Uri): Promise<void> {
    const link = this.links.get(uri);
    if (!link) throw new JsonRpcError(ErrorCode.NotFound, `No terminal at ${uri}`);
    const closed = await link.runner.terminals.close({ id: link.runnerId }).catch((err: unknown) => {
      if (ConnectError.from(err).code !== Code.NotFound) throw jsonRpcErrorFromRunner(err, "dispose the terminal");
      return undefined;
    });
    if (this.links.get(uri) === link) this.release(link, { exitCode: closed?.terminal?.exitCode }, "disposed");
  }

  /** Sends a signal to a terminal's process group. */
  async signal(link: TerminalLink, signal: string): Promise<void> {
    await link.runner.terminals.signal({ id: link.runnerId, signal });
  }

  /**
   * Applies a client's claim or title change to the runner's record on condition that nobody
   * changed it since it was checked, then runs `commit` (see label-writes.ts). Resolves to
   * undefined once applied and committed, or to the reason it was not.
   */
  writeLabel(link: TerminalLink, action: LabelAction, commit: () => void, recheck?: (claim: TerminalClaim) => string | undefined): Promise<string | undefined> {
    return writeLabelConditionally(link, action, { commit, recheck, settled: (deferred) => this.take(link.runner, deferred) });
  }

  /** Stops following every terminal (the gateway is shutting down; the terminals keep running in the runner). */
  close(): void {
    for (const link of this.links.values()) link.closed.abort();
  }

  /**
   * A runner terminal's record as this gateway's state: a new one with a URI opens its channel, a
   * known one is brought up to date. Of two terminals carrying the same URI (made while gateways saw
   * different runners), the one on the runner the URI ranks first is kept. The link, or undefined
   * when the terminal carries no URI or another terminal keeps it.
   */
  private take(runner: Runner, info: RunnerTerminalInfo): TerminalLink | undefined {
    const uri = info.labels[LABEL_URI];
    if (!uri || info.state === RunnerTerminalState.CLOSED) return undefined;
    const known = this.links.get(uri);
    if (known && known.runner === runner && known.runnerId === info.id) {
      this.refresh(known, info);
      return known;
    }
    if (known) {
      const keepNew = ranksBefore(uri, runner, known.runner);
      const [dropped, kept] = keepNew ? [{ runner: known.runner, id: known.runnerId }, runner] : [{ runner, id: info.id }, known.runner];
      this.options.log.warn({ uri, runner: dropped.runner.url, runnerId: dropped.id, kept: kept.url }, "a second terminal carries this URI; keeping the one on the runner the URI ranks first");
      if (!keepNew) return undefined;
      this.release(known, {}, "replaced by the terminal its URI ranks first");
    }
    return this.register(runner, uri, info);
  }

  private register(runner: Runner, uri: Uri, info: RunnerTerminalInfo): TerminalLink {
    const title = info.labels[LABEL_TITLE];
    const link = new TerminalLink(uri, runner, info.id, title !== undefined, this.options.log);
    link.saw(info);
    const { store, log } = this.options;
    link.follow = new TerminalFollow(link, { store, log, rebuilds: this.rebuilds, live: (action, outputOffset) => this.ingest(link, action, outputOffset), graceMs: this.options.followGraceMs });
    this.links.set(uri, link);
    store.openTerminal(uri, stateFromRecord(info), info.labels[LABEL_OWNER]);
    if (info.state === RunnerTerminalState.EXITED) store.commit(uri, exitOf(info));
    log.debug({ uri, runner: runner.url, runnerId: info.id }, "terminal listed");
    return link;
  }

  /**
   * Brings a terminal's state up to a newer record: claim and title from its labels; size, program
   * title, cwd and exit too while its output is not followed (the output stream brings those in
   * their place when it is). A record seen while this gateway's own label writes are in flight
   * waits for them, so their outcome is committed first.
   */
  private refresh(link: TerminalLink, info: RunnerTerminalInfo): void {
    if (info.revision <= link.revision) return;
    if (link.labelWrites > 0) {
      link.deferred = info;
      return;
    }
    link.saw(info);
    const { store } = this.options;
    const state = store.terminalSummary(link.uri);
    if (!state) return;
    const claim = claimFromLabel(info.labels[LABEL_CLAIM]);
    if (!sameClaim(claim, state.claim)) store.commit(link.uri, { type: "terminal/claimed", claim });
    const title = info.labels[LABEL_TITLE];
    if (title !== undefined) {
      link.keepClientTitle();
      if (title !== state.title) store.commit(link.uri, { type: "terminal/titleChanged", title });
    }
    if (link.follow.active) return;
    const updates: TerminalAction[] = [
      { type: "terminal/resized", cols: info.cols, rows: info.rows },
      { type: "terminal/titleChanged", title: titleFromProgram(info.title) },
      { type: "terminal/cwdChanged", cwd: pathToFileURL(info.cwd).href },
    ];
    for (const update of updates) if (!isRepeat(store.terminalSummary(link.uri)!, update, link.titleSetByClient)) store.commit(link.uri, update);
    if (info.state === RunnerTerminalState.EXITED && store.isRunning(link.uri)) store.commit(link.uri, exitOf(info));
  }

  private diedWithRunner(link: TerminalLink): void {
    link.gone = true;
    // Followed: its output stream finds it gone and reports the exit after the last output it had.
    if (link.follow.active || !this.options.store.isRunning(link.uri)) return;
    this.options.log.warn({ uri: link.uri, runner: link.runner.url }, "the runner restarted without this terminal; reporting it exited");
    this.options.store.commit(link.uri, { type: "terminal/exited" });
  }

  private async releaseWhenGone(link: TerminalLink): Promise<void> {
    // Not found: gone. Any other failure (the runner went away again): kept until its record is read again.
    const info = await link.runner.terminals.get({ id: link.runnerId }).then(
      ({ terminal }) => terminal,
      (err: unknown) => (ConnectError.from(err).code === Code.NotFound ? undefined : "unknown"),
    );
    if (info === "unknown" || this.links.get(link.uri) !== link) return;
    if (info && info.state !== RunnerTerminalState.CLOSED) this.take(link.runner, info);
    else this.release(link, { exitCode: info?.exitCode }, "the runner no longer has it");
  }

  private release(link: TerminalLink, exit: { exitCode?: number }, why: string): void {
    this.links.delete(link.uri);
    link.closed.abort();
    this.options.store.closeTerminal(link.uri, exit);
    this.options.log.info({ uri: link.uri, why }, "terminal released");
  }

  private exitHook(uri: Uri, cwd: string): void {
    try {
      this.options.onTerminalExit?.(cwd);
    } catch (err) {
      this.options.log.warn({ err, uri }, "the terminal exit hook failed");
    }
  }

  /**
   * Live output and events the runner reports, as committed actions; output is cut to the smallest
   * message a windowed subscriber takes (only the last piece carries the runner offset the output ends at).
   */
  private ingest(link: TerminalLink, action: TerminalAction, outputOffset?: number): void {
    if (this.links.get(link.uri) !== link) return;
    const { store } = this.options;
    const state = store.terminalSummary(link.uri);
    if (!state || isRepeat(state, action, link.titleSetByClient)) return;
    const limit = action.type === "terminal/data" ? store.channels.messageLimit(link.uri) : undefined;
    if (limit !== undefined && action.type === "terminal/data") {
      // A windowed viewer takes messages of a bounded size: output is cut to fit it (every viewer gets the same envelopes).
      const pieces = dataWithin(link.uri, action.data, limit);
      pieces.forEach((data, index) => store.commit(link.uri, { type: "terminal/data", data }, index === pieces.length - 1 ? { outputOffset } : {}));
      return;
    }
    store.commit(link.uri, action, { outputOffset });
    if (action.type === "terminal/exited") this.options.log.info({ uri: link.uri, exitCode: action.exitCode, signal: action.signal }, "terminal exited");
  }
}
