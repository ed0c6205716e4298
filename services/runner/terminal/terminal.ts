import { setTimeout as delay } from "node:timers/promises";
import { RunnerError } from "../runner-error.js";
import { titleFromOsc } from "../shell/osc-reader.js";
import type { LogEvent, OutputLog } from "../log/output-log.js";
import { FlowControl, type Reader } from "./flow-control.js";
import { labelsMatch, sameLabels } from "./labels.js";
import { groupHasLiveMembers } from "../process/process-group.js";
import { ShellIntegration } from "../shell/shell-integration.js";
import { ShellMarkScanner } from "../shell/shell-mark-scanner.js";
import { ScreenHistory } from "./screen-history.js";
import type { Screen } from "./screen-render.js";
import { groupIsAlive, signalGroup, signalProcess } from "../process/signals.js";
import type { SpawnPlan } from "../spawn/spawn-plan.js";
import type { ProcessExit, ProcessLauncher, ProcessSpec, TerminalProcess } from "../process/terminal-process.js";

/** A terminal as callers see it at one moment. */
export interface TerminalSnapshot {
  id: string;
  pid: number;
  isPty: boolean;
  title: string;
  cwd: string;
  cols: number;
  rows: number;
  labels: Record<string, string>;
  exit?: ProcessExit;
  startOffset: number;
  endOffset: number;
  createdAt: Date;
  exitedAt?: Date;
  argv: string[];
  commandDetection: boolean;
  /** The account the process runs as ("" for the runner's own). */
  runAs: string;
  /** 1 at spawn, one more for every change to the record (labels, size, title, cwd, exit, close). */
  revision: number;
  /** True once the terminal was closed and released. */
  closed: boolean;
}

/** What changed in a terminal's record. */
export type RecordChange = "spawned" | "labels" | "resized" | "title" | "cwd" | "exited" | "closed";

/** Told of every change to a terminal's record once it took effect; `previousLabels` for a labels change. */
export type RecordListener = (terminal: Terminal, change: RecordChange, previousLabels?: Record<string, string>) => void;

/** Which processes a signal goes to. */
export type SignalTarget = "group" | "process";

/** Pause between checks that a terminated process group is gone (each check may scan /proc). */
const GROUP_POLL_INTERVAL_MS = 20;
/** How long to wait for a group to vanish after SIGKILL (it cannot refuse; this only bounds a stuck kernel). */
const KILL_WAIT_MS = 2_000;

/** One process and everything the runner knows about it: its output log, size, title, labels and exit. */
export class Terminal {
  private process: TerminalProcess | undefined;
  private readonly marks = new ShellMarkScanner();
  private readonly shell: ShellIntegration | undefined;
  private commandDetection: boolean;
  private cwd: string;
  private exitInfo: ProcessExit | undefined;
  private exitedAt: Date | undefined;
  private closing: Promise<void> | undefined;
  private released = false;
  private readonly exitWaiters: Array<() => void> = [];
  private title: string;
  private cols: number;
  private rows: number;
  private labels: Record<string, string>;
  private readonly createdAt = new Date();
  private readonly flow: FlowControl;
  private readonly screens: ScreenHistory;
  private reading = true;
  private revision = 1;
  private recordListener: RecordListener | undefined;

  constructor(
    readonly id: string,
    readonly log: OutputLog,
    private readonly plan: SpawnPlan,
    readonly isPty: boolean,
    size: { cols: number; rows: number },
    labels: Record<string, string>,
  ) {
    this.title = plan.title;
    this.cwd = plan.cwd;
    this.commandDetection = plan.commandDetection;
    // Under a pty the shell's marks are read even without injected integration (a user's own prompt may print them).
    this.shell = isPty ? new ShellIntegration() : undefined;
    this.cols = size.cols;
    this.rows = size.rows;
    this.labels = { ...labels };
    this.screens = new ScreenHistory(size);
    this.flow = new FlowControl(() => this.log, () => this.applyFlow());
  }

  /** Registers an Attach stream's position, so output is read at the pace of the fastest reader. */
  openReader(offset: number): Reader {
    return this.flow.open(offset);
  }

  /** How many readers (Attach streams, follows) are open now. */
  get readerCount(): number {
    return this.flow.readerCount;
  }

  /** Reports every later change of the record to `listener` (changes before it only raise the revision). */
  onRecordChange(listener: RecordListener): void {
    this.recordListener = listener;
  }

  /** Starts the planned process, or records why it could not start and exits with the plan's code. */
  start(launcher: ProcessLauncher): void {
    const { failure } = this.plan;
    if (failure) {
      this.log.appendOutput(Buffer.from(`${failure.message}${this.isPty ? "\r\n" : "\n"}`));
      this.onExit({ exitCode: failure.exitCode, signal: "" });
      return;
    }
    if (this.commandDetection) this.log.record({ kind: "command_detection_available" });
    const spec: ProcessSpec = { ...this.plan, cols: this.cols, rows: this.rows };
    this.process = launcher.launch(spec, { onData: (data) => this.ingest(data), onExit: (exit) => this.onExit(exit) }, this.isPty);
  }

  /** True until the process has exited and its output has drained. */
  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** True once the terminal was closed and its log let go. */
  get isReleased(): boolean {
    return this.released;
  }

  /** Sends bytes to the process's input, then end of input when `eof`. */
  write(data: Buffer, eof: boolean): void {
    const process = this.runningProcess("write to");
    if (data.length > 0) {
      process.write(data);
      this.shell?.onInput(data);
    }
    if (eof) process.endInput();
  }

  /** Changes the size; records a `resized` event when it differs from the current one. */
  resize(cols: number, rows: number): void {
    const process = this.runningProcess("resize");
    if (cols === this.cols && rows === this.rows) return;
    process.resize(cols, rows);
    this.cols = cols;
    this.rows = rows;
    this.log.record({ kind: "resized", cols, rows });
    this.changed("resized");
  }

  /** Sends a signal to the process group or to the first process only. */
  signal(signal: NodeJS.Signals, target: SignalTarget): void {
    const { pid } = this.runningProcess("signal");
    if (target === "group") signalGroup(pid, signal);
    else signalProcess(pid, signal);
  }

  /** Drops the retained output (the screen it leaves is kept as where later screens start). */
  clear(): void {
    this.screens.clearing(this.log);
    this.log.clear();
  }

  /** The screen after the output before `endOffset` (default: all of it), rendered on demand from the retained log. */
  screen(endOffset: number | undefined, scrollbackLines: number, eventsAtEnd = false): Promise<Screen> {
    return this.screens.render(this.log, endOffset ?? this.log.endOffset, scrollbackLines, eventsAtEnd);
  }

  /**
   * Merges `set` into the labels, then removes the keys in `remove`; with `expectedRevision`, only if
   * the record is still at that revision (ABORTED otherwise). A change that changes nothing is no change.
   */
  setLabels(set: Record<string, string>, remove: string[], expectedRevision?: number): void {
    if (expectedRevision !== undefined && expectedRevision !== this.revision) {
      throw new RunnerError("aborted", `terminal ${this.id} is at revision ${this.revision}, not ${expectedRevision}: read it again and retry`);
    }
    const previous = { ...this.labels };
    Object.assign(this.labels, set);
    for (const key of remove) delete this.labels[key];
    if (!sameLabels(previous, this.labels)) this.changed("labels", previous);
  }

  /** True when every label in `selector` is present with the same value. */
  matches(selector: Record<string, string>): boolean {
    return labelsMatch(this.labels, selector);
  }

  /** The terminal's current description. */
  snapshot(): TerminalSnapshot {
    return {
      id: this.id,
      pid: this.process?.pid ?? 0,
      isPty: this.isPty,
      title: this.title,
      cwd: this.cwd,
      cols: this.cols,
      rows: this.rows,
      labels: { ...this.labels },
      exit: this.exitInfo,
      startOffset: this.log.startOffset,
      endOffset: this.log.endOffset,
      createdAt: this.createdAt,
      exitedAt: this.exitedAt,
      argv: [this.plan.file, ...this.plan.args],
      commandDetection: this.commandDetection,
      runAs: this.plan.runAs?.name ?? "",
      revision: this.revision,
      closed: this.released,
    };
  }

  /** Resolves once the process has exited and all of its output is in the log. */
  whenExited(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.exitWaiters.push(resolve));
  }

  /**
   * Ends the process group: SIGHUP (pty: what a closed terminal sends) and SIGTERM, up to
   * `graceMs` for it to go, then SIGKILL; resolves when the leader has exited (and was reaped) and
   * no member of the group is left alive.
   */
  close(graceMs: number): Promise<void> {
    this.closing ??= this.terminateGroup(graceMs);
    // Output held back for readers has nobody left to protect: read it, so the exit can follow it.
    this.applyFlow();
    return this.closing;
  }

  /** Lets go of the output log; the terminal is gone for callers. */
  release(): void {
    this.released = true;
    this.flow.dispose();
    this.log.dispose();
    this.changed("closed");
  }

  private async terminateGroup(graceMs: number): Promise<void> {
    const pgid = this.process?.pid ?? 0;
    if (groupIsAlive(pgid)) {
      if (this.isPty) signalGroup(pgid, "SIGHUP");
      signalGroup(pgid, "SIGTERM");
    }
    if (await this.groupGoneWithin(pgid, graceMs)) return;
    signalGroup(pgid, "SIGKILL");
    await this.groupGoneWithin(pgid, KILL_WAIT_MS);
  }

  private async groupGoneWithin(pgid: number, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (!this.running && !groupHasLiveMembers(pgid)) return true;
      if (Date.now() >= deadline) return false;
      await delay(GROUP_POLL_INTERVAL_MS);
    }
  }

  private runningProcess(action: string): TerminalProcess {
    if (!this.running || !this.process) {
      throw new RunnerError("failed_precondition", `cannot ${action} terminal ${this.id}: its process has exited`);
    }
    return this.process;
  }

  private ingest(data: Buffer): void {
    let from = 0;
    for (const run of this.marks.feed(data)) {
      this.log.appendOutput(from === 0 && run.end === data.length ? data : data.subarray(from, run.end), run.kind, run.keepUnsettled);
      from = run.end;
      if (run.payload !== undefined) for (const event of this.eventsOf(run.payload)) this.log.record(event);
    }
    this.applyFlow();
  }

  private applyFlow(): void {
    if (!this.process || !this.running) return;
    const read = this.closing !== undefined || this.flow.shouldRead();
    if (read === this.reading) return;
    this.reading = read;
    if (read) this.process.resume();
    else this.process.pause();
  }

  /** What one OSC sequence in the output means for the terminal: a new title, shell marks, or nothing. */
  private eventsOf(payload: string): Array<Exclude<LogEvent, { kind: "output" | "exited" }>> {
    const title = titleFromOsc(payload);
    if (title !== undefined) {
      if (title === this.title) return [];
      this.title = title;
      this.changed("title");
      return [{ kind: "title_changed", title }];
    }
    const events: Array<Exclude<LogEvent, { kind: "output" | "exited" }>> = (this.shell?.onOsc(payload) ?? []).filter(
      (event) => event.kind !== "cwd_changed" || event.cwd !== this.cwd,
    );
    for (const event of events) {
      if (event.kind !== "cwd_changed") continue;
      this.cwd = event.cwd;
      this.changed("cwd");
    }
    if (!this.commandDetection && events.some((event) => event.kind !== "cwd_changed")) {
      this.commandDetection = true;
      events.unshift({ kind: "command_detection_available" });
    }
    return events;
  }

  private onExit(exit: ProcessExit): void {
    if (this.exitInfo) return;
    this.exitInfo = exit;
    this.exitedAt = new Date();
    this.log.finish({ kind: "exited", exitCode: exit.exitCode, signal: exit.signal });
    this.changed("exited");
    for (const resolve of this.exitWaiters.splice(0)) resolve();
  }

  private changed(change: RecordChange, previousLabels?: Record<string, string>): void {
    this.revision++;
    this.recordListener?.(this, change, previousLabels);
  }
}
