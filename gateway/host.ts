import { fileURLToPath, pathToFileURL } from "node:url";
import { ConnectError, Code } from "@connectrpc/connect";
import type { Logger } from "../lib/logger.js";
import { ActionLog } from "./action-log.js";
import { CLIENT_DISPATCHABLE } from "./ahp/client-dispatchable.js";
import { ErrorCode } from "./ahp/error-codes.js";
import { rootReducer } from "./ahp/root-reducer.js";
import { shapeRootState, shapeTerminalState } from "./ahp/shaping.js";
import { ROOT_URI, type ActionOrigin, type RootAction, type RootState, type Snapshot, type TerminalAction, type TerminalClaim, type TerminalState, type Uri } from "./ahp/types.js";
import type { TerminalInfo as RunnerTerminalInfo } from "../gen/terminal/v1/terminal_pb.js";
import type { Grant } from "./auth/grants.js";
import { Channels, type Peer } from "./channels.js";
import { checkRootAction, checkTerminalAction } from "./action-checks.js";
import { JsonRpcError, notificationFrame } from "./json-rpc.js";
import { followRunnerTerminal } from "./runner-bridge.js";
import { isRunnerUnreachable, jsonRpcErrorFromRunner } from "./runner-errors.js";
import type { Runner } from "./runner-client.js";
import { claimFromLabel, LABEL_CLAIM, LABEL_TITLE, LABEL_URI, labelsFor } from "./runner-labels.js";
import type { RunnerPool } from "./runner-pool.js";
import { carryOut } from "./terminal-effects.js";
import { HostTerminals } from "./host-terminals.js";
import type { GatewayMetrics, RefusalKind } from "./metrics.js";
import { TerminalChannel } from "./terminal-channel.js";
import { runTurnCommand, type TurnCommand, type TurnCommandResult } from "./turn-commands.js";

/** The grant each client-dispatchable terminal action needs; a type missing here is refused, never let through ungranted. */
const GRANT_OF_ACTION: Readonly<Partial<Record<string, Grant>>> = {
  "terminal/input": "terminal:input",
  "terminal/resized": "terminal:resize",
  "terminal/claimed": "terminal:claim",
  "terminal/titleChanged": "terminal:rename",
  "terminal/cleared": "terminal:clear",
};

/** What the host needs: its runners (none for a host that serves no terminals), a logger, limits and defaults. */
export interface HostOptions {
  runners: RunnerPool | undefined;
  log: Logger;
  scrollbackChars: number;
  defaultDirectory: string;
  /** The host's own shell, for terminals a backend opens with a shell line ($SHELL, else /bin/sh). */
  shell: string;
  metrics?: GatewayMetrics;
  /** Called with a terminal's last working directory when its process exits (a host refreshes that directory's changes). */
  onTerminalExit?: (cwd: string) => void;
}

/** A `createTerminal` after its parameters were checked. */
export interface CreateTerminalRequest {
  uri: Uri;
  claim: TerminalClaim;
  /** The shell to run; the runner's own when absent. */
  shell?: string;
  /** A program and its arguments, run word by word (instead of an interactive shell). */
  argv?: string[];
  /** A shell line handed to the shell as is (instead of an interactive shell). */
  command?: string;
  env?: Record<string, string>;
  name?: string;
  cwd?: string;
  cols: number;
  rows: number;
  /** Sees every action applied to the terminal, from the first one. */
  watch?: (action: TerminalAction) => void;
}

/**
 * The AHP host for terminals: the root state and every terminal's authoritative state, the global
 * `serverSeq`, the channels clients subscribe to, and the rules for what clients may dispatch.
 * Reaches the runner only through the generated client.
 */
export class GatewayHost {
  readonly actions = new ActionLog();
  readonly channels = new Channels();
  private readonly byUri = new Map<Uri, TerminalChannel>();
  /** The port through which a backend, in-process, opens terminals of the host's own; undefined without a runner. */
  readonly terminals: HostTerminals | undefined;
  private readonly creating = new Set<Uri>();
  private root: RootState = {
    agents: [],
    terminals: [],
    config: {
      schema: {
        type: "object",
        properties: {
          defaultShell: { type: "string", title: "Default shell", description: "Absolute path of the shell new terminals run" },
        },
      },
      values: {},
    },
  };

  constructor(private readonly options: HostOptions) {
    this.terminals = options.runners ? new HostTerminals(this, options.shell) : undefined;
    options.metrics?.countTerminalsWith(() => this.byUri.size);
  }

  /** Runs a turn's `!` command in a terminal of its own; see runTurnCommand. */
  runTurnCommand(command: TurnCommand): Promise<TurnCommandResult> {
    return runTurnCommand(this.terminals, command, this.options.defaultDirectory);
  }

  /** True for the root channel and every open terminal. */
  hasChannel(uri: Uri): boolean {
    return uri === ROOT_URI || this.byUri.has(uri);
  }

  /** A channel's state as one connection sees it (its version's shape, its own config values), or undefined for an unknown channel. */
  snapshot(uri: Uri, peer: Peer): Snapshot | undefined {
    const fromSeq = this.actions.serverSeq;
    if (uri === ROOT_URI) {
      const root = this.root.config ? { ...this.root, config: { ...this.root.config, values: { ...peer.configValues } } } : this.root;
      return { resource: uri, state: shapeRootState(root, peer.features), fromSeq };
    }
    const terminal = this.byUri.get(uri);
    return terminal && { resource: uri, state: shapeTerminalState(terminal.state, peer.features), fromSeq };
  }

  /** True when `uri` names an open terminal. */
  isTerminal(uri: Uri): boolean {
    return this.byUri.has(uri);
  }

  /** True when this host has runners, so it can open terminals. */
  get servesTerminals(): boolean {
    return this.options.runners !== undefined;
  }

  /** True when terminals can be opened now: at least one runner answers its health check (always true without runners). */
  ready(timeoutMs: number): Promise<boolean> {
    return this.options.runners ? this.options.runners.ready(timeoutMs) : Promise.resolve(true);
  }

  /**
   * Spawns a terminal under the given URI on the least loaded runner (the next one when a runner
   * cannot be reached) and lists it on the root channel.
   */
  async createTerminal(request: CreateTerminalRequest): Promise<TerminalChannel> {
    const { uri } = request;
    const pool = this.options.runners;
    if (!pool) throw new JsonRpcError(ErrorCode.MethodNotFound, "This host does not serve createTerminal yet");
    if (this.byUri.has(uri) || this.creating.has(uri)) {
      throw new JsonRpcError(ErrorCode.AlreadyExists, `A channel already exists at ${uri}`);
    }
    this.creating.add(uri);
    try {
      const spawn = {
        title: request.name,
        shell: request.shell,
        argv: request.argv,
        command: request.command,
        env: request.env,
        cwd: request.cwd ?? this.options.defaultDirectory,
        cols: request.cols,
        rows: request.rows,
        labels: labelsFor(uri, request.claim, request.name),
      };
      const runners = pool.list().sort((a, b) => this.terminalsOn(a) - this.terminalsOn(b));
      let lastError: unknown = new Error("no runner is configured");
      for (const runner of runners) {
        try {
          const { terminal: info } = await runner.terminals.spawn(spawn);
          const terminal = this.register(runner, uri, info!, request.claim, request.name, request.watch);
          this.options.log.info({ uri, runner: runner.url, runnerId: terminal.runnerId, pid: info!.pid }, "terminal created");
          this.emitTerminalList();
          return terminal;
        } catch (err) {
          lastError = err;
          if (!isRunnerUnreachable(err)) break;
          this.options.log.warn({ runner: runner.url, err: ConnectError.from(err).message }, "runner unreachable; trying the next");
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
   * the start, claim and client-set title come back from the labels. Returns how many it adopted.
   */
  async adoptRunnerTerminals(runner: Runner): Promise<number> {
    const { terminals } = await runner.terminals.list({});
    let adopted = 0;
    for (const info of terminals) {
      const uri = info.labels[LABEL_URI];
      if (!uri || this.byUri.has(uri) || this.creating.has(uri)) continue;
      this.register(runner, uri, info, claimFromLabel(info.labels[LABEL_CLAIM]), info.labels[LABEL_TITLE]);
      this.options.log.info({ uri, runner: runner.url, runnerId: info.id }, "terminal adopted");
      adopted++;
    }
    if (adopted > 0) this.emitTerminalList();
    return adopted;
  }

  /** Ends a terminal's process in the runner and removes it; -32008 for an unknown URI. */
  async disposeTerminal(uri: Uri): Promise<void> {
    const terminal = this.byUri.get(uri);
    if (!terminal) throw new JsonRpcError(ErrorCode.NotFound, `No terminal at ${uri}`);
    await terminal.runner.terminals.close({ id: terminal.runnerId }).catch((err: unknown) => {
      if (ConnectError.from(err).code !== Code.NotFound) throw jsonRpcErrorFromRunner(err, "dispose the terminal");
    });
    if (this.byUri.get(uri) !== terminal) return;
    terminal.follow.abort();
    this.byUri.delete(uri);
    this.channels.drop(uri);
    this.options.log.info({ uri }, "terminal disposed");
    this.emitTerminalList();
  }

  /**
   * Handles a `dispatchAction`: an accepted action is applied, stamped and echoed with its origin
   * to every subscriber and the sender, then carried out; a refused one goes back to the sender
   * alone with a reason, and changes nothing.
   */
  dispatch(peer: Peer, channel: Uri, clientSeq: number, action: Record<string, unknown>): void {
    const origin: ActionOrigin = { clientId: peer.clientId, clientSeq };
    const refuse = (reason: string, kind: RefusalKind = "invalid"): void => {
      this.options.metrics?.rejectedActions.inc({ reason: kind });
      const envelope = { channel, action, serverSeq: this.actions.serverSeq, origin, rejectionReason: reason };
      peer.sendFrame(notificationFrame("action", envelope));
    };
    const type = action.type;
    if (typeof type !== "string") return refuse("an action needs a string type", "malformed");
    if (!CLIENT_DISPATCHABLE.has(type)) return refuse(`"${type}" is not an action clients may dispatch`, "not_dispatchable");
    if (channel === ROOT_URI) {
      const refusal = peer.accessRefusal(undefined);
      if (refusal) return refuse(refusal, "not_allowed");
      const accepted = checkRootAction(action);
      if (typeof accepted === "string") return refuse(accepted);
      // Root config is each connection's own: applied to it, echoed to it alone, never replayed to others.
      peer.configValues = accepted.replace ? { ...accepted.config } : { ...peer.configValues, ...accepted.config };
      peer.sendFrame(notificationFrame("action", this.actions.stampPrivate(ROOT_URI, accepted, origin)));
      return;
    }
    const terminal = this.byUri.get(channel);
    if (!terminal) return refuse(`No terminal at ${channel}`, "no_terminal");
    const grant = GRANT_OF_ACTION[type];
    if (!grant) return refuse(`"${type}" cannot be dispatched to a terminal`);
    const refusal = peer.accessRefusal(grant);
    if (refusal) return refuse(refusal, "not_allowed");
    const accepted = checkTerminalAction(terminal, action, peer);
    if (typeof accepted === "string") return refuse(accepted);
    terminal.apply(accepted);
    this.channels.broadcast(this.actions.append(channel, accepted, origin), peer);
    this.carryOut(terminal, accepted);
  }

  /** Stops following every terminal (the gateway is shutting down; the terminals keep running in the runner). */
  close(): void {
    for (const terminal of this.byUri.values()) terminal.follow.abort();
  }

  private register(
    runner: Runner,
    uri: Uri,
    info: RunnerTerminalInfo,
    claim: TerminalClaim,
    title: string | undefined,
    watch?: (action: TerminalAction) => void,
  ): TerminalChannel {
    const state: TerminalState = {
      title: title ?? info.title,
      cwd: pathToFileURL(info.cwd).href,
      cols: info.cols,
      rows: info.rows,
      content: [],
      claim,
      isPty: info.isPty,
      lifecycle: { status: "running" },
    };
    if (info.commandDetection) state.supportsCommandDetection = true;
    const terminal = new TerminalChannel(uri, runner, info.id, state, title !== undefined, this.options.scrollbackChars, this.options.log);
    if (watch) terminal.watch(watch);
    this.byUri.set(uri, terminal);
    void followRunnerTerminal(runner.terminals, terminal.runnerId, (action) => this.fromRunner(terminal, action), {
      log: this.options.log,
      signal: terminal.follow.signal,
      waitForRoom: () => this.channels.waitForRoom(uri),
    });
    return terminal;
  }

  /** The open terminal at `uri`, for the host's own terminal port; undefined when there is none. */
  terminalAt(uri: Uri): TerminalChannel | undefined {
    return this.byUri.get(uri);
  }

  /** Every open terminal's root-list row. */
  terminalRows(): ReturnType<TerminalChannel["info"]>[] {
    return [...this.byUri.values()].map((terminal) => terminal.info());
  }

  /** Applies an action the host itself takes on a terminal (resize, input from a backend) and carries it out, as for a client's. */
  act(terminal: TerminalChannel, action: TerminalAction): void {
    if (action.type !== "terminal/input") {
      terminal.apply(action);
      this.channels.broadcast(this.actions.append(terminal.uri, action));
    }
    this.carryOut(terminal, action);
  }

  /** Sends a signal to a terminal's process group. */
  async signal(terminal: TerminalChannel, signal: string): Promise<void> {
    await terminal.runner.terminals.signal({ id: terminal.runnerId, signal });
  }

  private carryOut(terminal: TerminalChannel, action: TerminalAction): void {
    carryOut(terminal, action, this.options.log);
    if (action.type === "terminal/titleChanged" || action.type === "terminal/claimed") this.emitTerminalList();
  }

  private terminalsOn(runner: Runner): number {
    let count = 0;
    for (const terminal of this.byUri.values()) if (terminal.runner === runner) count++;
    return count;
  }

  private fromRunner(terminal: TerminalChannel, action: TerminalAction): void {
    if (this.byUri.get(terminal.uri) !== terminal) return;
    const { state } = terminal;
    if (action.type === "terminal/resized" && action.cols === state.cols && action.rows === state.rows) return;
    if (action.type === "terminal/titleChanged" && (terminal.titleSetByClient || action.title === state.title)) return;
    if (action.type === "terminal/cwdChanged" && action.cwd === state.cwd) return;
    terminal.apply(action);
    this.channels.broadcast(this.actions.append(terminal.uri, action));
    if (action.type === "terminal/exited") {
      this.options.log.info({ uri: terminal.uri, exitCode: action.exitCode, signal: action.signal }, "terminal exited");
      try {
        if (this.options.onTerminalExit && terminal.state.cwd) this.options.onTerminalExit(fileURLToPath(terminal.state.cwd));
      } catch (err) {
        this.options.log.warn({ err, uri: terminal.uri }, "the terminal exit hook failed");
      }
    }
    if (action.type === "terminal/exited" || action.type === "terminal/titleChanged") this.emitTerminalList();
  }

  private emitTerminalList(): void {
    const action: RootAction = { type: "root/terminalsChanged", terminals: this.terminalRows() };
    this.root = rootReducer(this.root, action);
    this.channels.broadcast(this.actions.append(ROOT_URI, action));
  }
}
