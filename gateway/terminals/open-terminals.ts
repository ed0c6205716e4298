import { fileURLToPath, pathToFileURL } from "node:url";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorCode } from "../../ahp/error-codes.js";
import { dataWithin } from "../../ahp/escaped-split.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import type { TerminalAction, TerminalClaim, TerminalState, Uri } from "../../ahp/types.js";
import { TerminalState as RunnerTerminalState, type TerminalInfo as RunnerTerminalInfo } from "../../gen/terminal/v1/terminal_pb.js";
import type { Logger } from "../../lib/logger.js";
import { titleFromProgram } from "../../lib/titles.js";
import type { StateStore, TerminalWatcher } from "../state/store.js";
import { followRunnerTerminal } from "../runners/runner-bridge.js";
import type { Runner } from "../runners/runner-client.js";
import { isRunnerUnreachable, jsonRpcErrorFromRunner } from "../runners/runner-errors.js";
import { claimFromLabel, LABEL_CLAIM, LABEL_OWNER, LABEL_TITLE, LABEL_URI, labelsFor } from "../runners/runner-labels.js";
import type { RunnerPool } from "../runners/runner-pool.js";
import { Rebuilds } from "./rebuilds.js";
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
  /** The longest a request waits for adopted terminals to be rebuilt (default REBUILD_WAIT_MS). */
  rebuildWaitMs?: number;
}

/**
 * Opens, adopts and disposes of terminals: places each on the least loaded runner, keeps its
 * link to the runner terminal behind it, and takes in what the runner reports about it (through
 * the runner bridge) as actions committed to the state store. An adopted terminal is "rebuilding"
 * until everything the runner held for it when it was listed has become state.
 */
export class OpenTerminals {
  private readonly links = new Map<Uri, TerminalLink>();
  private readonly creating = new Set<Uri>();
  private readonly rebuilds: Rebuilds;

  constructor(private readonly options: OpenTerminalsOptions) {
    this.rebuilds = new Rebuilds(options.log, options.rebuildWaitMs);
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

  /** Resolves once the adopted terminals among `uris` (every one when undefined) are rebuilt from the runner's retained log, or after a bound. */
  rebuilt(uris?: Iterable<Uri>): Promise<void> {
    return this.rebuilds.wait(uris);
  }

  /**
   * Spawns a terminal under the given URI on the least loaded runner (the next one when a runner
   * cannot be reached or is full) and lists it on the root channel.
   */
  create(request: CreateTerminalRequest): Promise<TerminalLink> {
    return inCreateTerminalSpan(request.uri, () => this.spawnOnLeastLoaded(request));
  }

  private async spawnOnLeastLoaded(request: CreateTerminalRequest): Promise<TerminalLink> {
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
      };
      const runners = pool.list().sort((a, b) => this.terminalsOn(a) - this.terminalsOn(b));
      let lastError: unknown = new Error("no runner is configured");
      for (const runner of runners) {
        try {
          const { terminal: info } = await runner.terminals.spawn(spawn);
          const link = this.register(runner, uri, info!, { claim: request.claim, title: request.name, owner: request.owner }, request.watch);
          this.options.log.info({ uri, runner: runner.url, runnerId: link.runnerId, pid: info!.pid }, "terminal created");
          return link;
        } catch (err) {
          lastError = err;
          // A runner that is down, or full (out of descriptors, spawns queued to its limit), leaves the terminal to the next one.
          const full = ConnectError.from(err).code === Code.ResourceExhausted;
          if (!full && !isRunnerUnreachable(err)) break;
          this.options.log.warn({ runner: runner.url, err: ConnectError.from(err).message }, full ? "runner is full; trying the next" : "runner unreachable; trying the next");
        }
      }
      throw jsonRpcErrorFromRunner(lastError, "create the terminal");
    } finally {
      this.creating.delete(uri);
    }
  }

  /**
   * Takes over a runner's terminals that a gateway created (they carry its URI label), so a
   * restarted gateway serves them again: their state is rebuilt by replaying the retained log from
   * the start, claim, client-set title and owner come back from the labels. Returns how many it adopted.
   */
  async adopt(runner: Runner): Promise<number> {
    const { terminals } = await runner.terminals.list({});
    let adopted = 0;
    for (const info of terminals) {
      const uri = info.labels[LABEL_URI];
      if (!uri || this.options.store.hasChannel(uri) || this.creating.has(uri)) continue;
      const until = { offset: Number(info.endOffset), exited: info.state === RunnerTerminalState.EXITED };
      const recorded = { claim: claimFromLabel(info.labels[LABEL_CLAIM]), title: info.labels[LABEL_TITLE], owner: info.labels[LABEL_OWNER] };
      this.register(runner, uri, info, recorded, undefined, until);
      this.options.log.info({ uri, runner: runner.url, runnerId: info.id }, "terminal adopted");
      adopted++;
    }
    return adopted;
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
    if (this.links.get(uri) !== link) return;
    link.follow.abort();
    this.links.delete(uri);
    this.options.store.closeTerminal(uri, { exitCode: closed?.terminal?.exitCode });
    this.options.log.info({ uri }, "terminal disposed");
  }

  /** Sends a signal to a terminal's process group. */
  async signal(link: TerminalLink, signal: string): Promise<void> {
    await link.runner.terminals.signal({ id: link.runnerId, signal });
  }

  /** Stops following every terminal (the gateway is shutting down; the terminals keep running in the runner). */
  close(): void {
    for (const link of this.links.values()) link.follow.abort();
  }

  private register(
    runner: Runner,
    uri: Uri,
    info: RunnerTerminalInfo,
    { claim, title, owner }: { claim: TerminalClaim; title: string | undefined; owner: string | undefined },
    watch?: TerminalWatcher,
    until?: { offset: number; exited: boolean },
  ): TerminalLink {
    const state: TerminalState = {
      title: title ?? titleFromProgram(info.title),
      cwd: pathToFileURL(info.cwd).href,
      cols: info.cols,
      rows: info.rows,
      content: [],
      claim,
      isPty: info.isPty,
      lifecycle: { status: "running" },
    };
    if (info.commandDetection) state.supportsCommandDetection = true;
    const link = new TerminalLink(uri, runner, info.id, title !== undefined, this.options.log);
    this.links.set(uri, link);
    const { store } = this.options;
    store.openTerminal(uri, state, owner);
    if (watch) store.watch(uri, watch);
    const caughtUp = until && this.rebuilds.track(uri, link.follow.signal);
    void followRunnerTerminal(runner.terminals, link.runnerId, (action, outputOffset) => this.ingest(link, action, outputOffset), {
      log: this.options.log,
      signal: link.follow.signal,
      waitForRoom: () => store.channels.waitForRoom(uri, link.follow.signal),
      until,
      caughtUp,
      reachedOffset: (offset) => {
        link.outputOffset = offset;
      },
    });
    return link;
  }

  private terminalsOn(runner: Runner): number {
    let count = 0;
    for (const link of this.links.values()) if (link.runner === runner) count++;
    return count;
  }

  /**
   * What the runner reports, as committed actions: repeats of the current size, title or cwd are
   * dropped, as is a program's title over a client's; output is cut to the smallest message a
   * windowed subscriber takes (only the last piece carries the runner offset the output ends at).
   */
  private ingest(link: TerminalLink, action: TerminalAction, outputOffset?: number): void {
    if (this.links.get(link.uri) !== link) return;
    const state = this.options.store.terminalSummary(link.uri);
    if (!state) return;
    if (action.type === "terminal/resized" && action.cols === state.cols && action.rows === state.rows) return;
    if (action.type === "terminal/titleChanged" && (link.titleSetByClient || action.title === state.title)) return;
    if (action.type === "terminal/cwdChanged" && action.cwd === state.cwd) return;
    const { store } = this.options;
    const limit = action.type === "terminal/data" ? store.channels.messageLimit(link.uri) : undefined;
    if (limit !== undefined && action.type === "terminal/data") {
      // A windowed viewer takes messages of a bounded size: output is cut to fit it (every viewer gets the same envelopes).
      const pieces = dataWithin(link.uri, action.data, limit);
      pieces.forEach((data, index) => store.commit(link.uri, { type: "terminal/data", data }, index === pieces.length - 1 ? { outputOffset } : {}));
      return;
    }
    store.commit(link.uri, action, { outputOffset });
    if (action.type !== "terminal/exited") return;
    this.options.log.info({ uri: link.uri, exitCode: action.exitCode, signal: action.signal }, "terminal exited");
    const cwd = this.options.store.terminalSummary(link.uri)?.cwd;
    try {
      if (this.options.onTerminalExit && cwd) this.options.onTerminalExit(fileURLToPath(cwd));
    } catch (err) {
      this.options.log.warn({ err, uri: link.uri }, "the terminal exit hook failed");
    }
  }
}
