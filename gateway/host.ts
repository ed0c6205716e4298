import { fileURLToPath, pathToFileURL } from "node:url";
import { ConnectError, Code } from "@connectrpc/connect";
import type { Logger } from "../lib/logger.js";
import { ActionLog } from "./action-log.js";
import { parseClaim } from "./ahp/claims.js";
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
import type { RunnerClient } from "./runner-client.js";
import { jsonRpcErrorFromRunner } from "./runner-errors.js";
import { HostTerminals } from "./host-terminals.js";
import { TerminalChannel } from "./terminal-channel.js";
import { runTurnCommand, type TurnCommand, type TurnCommandResult } from "./turn-commands.js";

/** The grant each client-dispatchable terminal action needs. */
const GRANT_OF_ACTION: Readonly<Record<string, Grant>> = {
  "terminal/input": "terminal:input",
  "terminal/resized": "terminal:resize",
  "terminal/claimed": "terminal:claim",
  "terminal/titleChanged": "terminal:rename",
  "terminal/cleared": "terminal:clear",
};

/** Runner labels the gateway keeps on each terminal, so a later gateway can recognise and re-adopt it. */
export const LABEL_URI = "ahp.uri";
const LABEL_TITLE = "ahp.title";
const LABEL_CLAIM = "ahp.claim";

/** What the host needs: the runner (none for a host that serves no terminals), a logger, limits and defaults. */
export interface HostOptions {
  runner: RunnerClient | undefined;
  log: Logger;
  scrollbackChars: number;
  defaultDirectory: string;
  /** The host's own shell, for terminals a backend opens with a shell line ($SHELL, else /bin/sh). */
  shell: string;
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
    this.terminals = options.runner ? new HostTerminals(this, options.shell) : undefined;
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

  /** True when this host has a runner, so it can open terminals. */
  get servesTerminals(): boolean {
    return this.options.runner !== undefined;
  }

  /** Spawns a terminal in the runner under the given URI and lists it on the root channel. */
  async createTerminal(request: CreateTerminalRequest): Promise<TerminalChannel> {
    const { uri } = request;
    const runner = this.options.runner;
    if (!runner) throw new JsonRpcError(ErrorCode.MethodNotFound, "This host does not serve createTerminal yet");
    if (this.byUri.has(uri) || this.creating.has(uri)) {
      throw new JsonRpcError(ErrorCode.AlreadyExists, `A channel already exists at ${uri}`);
    }
    this.creating.add(uri);
    try {
      const labels: Record<string, string> = { [LABEL_URI]: uri, [LABEL_CLAIM]: JSON.stringify(request.claim) };
      if (request.name !== undefined) labels[LABEL_TITLE] = request.name;
      const { terminal: info } = await runner
        .spawn({
          title: request.name,
          shell: request.shell,
          argv: request.argv,
          command: request.command,
          env: request.env,
          cwd: request.cwd ?? this.options.defaultDirectory,
          cols: request.cols,
          rows: request.rows,
          labels,
        })
        .catch((err: unknown) => {
          throw jsonRpcErrorFromRunner(err, "create the terminal");
        });
      const terminal = this.register(runner, uri, info!, request.claim, request.name, request.watch);
      this.options.log.info({ uri, runnerId: terminal.runnerId, pid: info!.pid }, "terminal created");
      this.emitTerminalList();
      return terminal;
    } finally {
      this.creating.delete(uri);
    }
  }

  /**
   * Takes over the runner's terminals that a gateway created (they carry its URI label), so a
   * restarted gateway serves them again: their state is rebuilt by replaying the retained log from
   * the start, claim and client-set title come back from the labels. Returns how many it adopted.
   */
  async adoptRunnerTerminals(): Promise<number> {
    const runner = this.options.runner;
    if (!runner) return 0;
    const { terminals } = await runner.list({});
    let adopted = 0;
    for (const info of terminals) {
      const uri = info.labels[LABEL_URI];
      if (!uri || this.byUri.has(uri) || this.creating.has(uri)) continue;
      this.register(runner, uri, info, claimFromLabel(info.labels[LABEL_CLAIM]), info.labels[LABEL_TITLE]);
      this.options.log.info({ uri, runnerId: info.id }, "terminal adopted");
      adopted++;
    }
    if (adopted > 0) this.emitTerminalList();
    return adopted;
  }

  /** Ends a terminal's process in the runner and removes it; -32008 for an unknown URI. */
  async disposeTerminal(uri: Uri): Promise<void> {
    const terminal = this.byUri.get(uri);
    if (!terminal) throw new JsonRpcError(ErrorCode.NotFound, `No terminal at ${uri}`);
    await this.options.runner!.close({ id: terminal.runnerId }).catch((err: unknown) => {
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
    const refuse = (reason: string): void => {
      const envelope = { channel, action, serverSeq: this.actions.serverSeq, origin, rejectionReason: reason };
      peer.sendFrame(notificationFrame("action", envelope));
    };
    const type = action.type;
    if (typeof type !== "string") return refuse("an action needs a string type");
    if (!CLIENT_DISPATCHABLE.has(type)) return refuse(`"${type}" is not an action clients may dispatch`);
    if (channel === ROOT_URI) {
      const refusal = peer.accessRefusal(undefined);
      if (refusal) return refuse(refusal);
      const accepted = checkRootAction(action);
      if (typeof accepted === "string") return refuse(accepted);
      // Root config is each connection's own: applied to it, echoed to it alone, never replayed to others.
      peer.configValues = accepted.replace ? { ...accepted.config } : { ...peer.configValues, ...accepted.config };
      peer.sendFrame(notificationFrame("action", this.actions.stampPrivate(ROOT_URI, accepted, origin)));
      return;
    }
    const terminal = this.byUri.get(channel);
    if (!terminal) return refuse(`No terminal at ${channel}`);
    const refusal = peer.accessRefusal(GRANT_OF_ACTION[type]);
    if (refusal) return refuse(refusal);
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
    runner: RunnerClient,
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
    const terminal = new TerminalChannel(uri, info.id, state, title !== undefined, this.options.scrollbackChars);
    if (watch) terminal.watch(watch);
    this.byUri.set(uri, terminal);
    void followRunnerTerminal(runner, terminal.runnerId, (action) => this.fromRunner(terminal, action), {
      log: this.options.log,
      signal: terminal.follow.signal,
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
    await this.options.runner!.signal({ id: terminal.runnerId, signal });
  }

  private carryOut(terminal: TerminalChannel, action: TerminalAction): void {
    const { log } = this.options;
    const runner = this.options.runner!;
    const id = terminal.runnerId;
    const failed = (err: unknown): void => log.warn({ uri: terminal.uri, action: action.type, err: ConnectError.from(err).message }, "runner did not carry out an accepted action");
    switch (action.type) {
      case "terminal/input":
        void terminal.queue(() => runner.write({ id, data: Buffer.from(action.data, "utf8") }), failed);
        break;
      case "terminal/resized":
        void terminal.queue(() => runner.resize({ id, cols: action.cols, rows: action.rows }), failed);
        break;
      case "terminal/cleared":
        void terminal.queue(() => runner.clear({ id }), failed);
        break;
      case "terminal/titleChanged":
        terminal.titleSetByClient = true;
        void terminal.queue(() => runner.setLabels({ id, set: { [LABEL_TITLE]: action.title } }), failed);
        this.emitTerminalList();
        break;
      case "terminal/claimed":
        void terminal.queue(() => runner.setLabels({ id, set: { [LABEL_CLAIM]: JSON.stringify(action.claim) } }), failed);
        this.emitTerminalList();
        break;
      default:
        break;
    }
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
    const action: RootAction = { type: "root/terminalsChanged", terminals: [...this.byUri.values()].map((terminal) => terminal.info()) };
    this.root = rootReducer(this.root, action);
    this.channels.broadcast(this.actions.append(ROOT_URI, action));
  }
}

function claimFromLabel(label: string | undefined): TerminalClaim {
  try {
    return parseClaim(JSON.parse(label ?? ""), { requireChat: false });
  } catch {
    // A label no gateway wrote: the terminal is listed, held by no connected client.
    return { kind: "client", clientId: "" };
  }
}
