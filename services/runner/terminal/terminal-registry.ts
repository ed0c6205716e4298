import { randomUUID } from "node:crypto";
import { RunnerError } from "../runner-error.js";
import type { RunnerMetrics } from "../metrics.js";
import { OutputLog } from "../log/output-log.js";
import type { RetentionBudget } from "../log/retention-budget.js";
import { RunAsPolicy } from "../spawn/run-as.js";
import { planSpawn, type RunnerHost, type SpawnOptions } from "../spawn/spawn-plan.js";
import type { ProcessLauncher } from "../process/terminal-process.js";
import { Terminal, type TerminalSnapshot } from "./terminal.js";
import { ChangeJournal, type WatchLimits } from "./change-journal.js";

/** How the caller wants the process connected. */
export type TerminalMode = "auto" | "pty" | "pipes";

/** A spawn request in the runner's own terms (see spawn-request.ts for the RPC side). */
export interface SpawnRequestOptions extends Omit<SpawnOptions, "isPty" | "account"> {
  id: string;
  mode: TerminalMode;
  labels: Record<string, string>;
  /** The Unix account to run as ("" for the runner's own); checked against `RegistryOptions.runAs`. */
  runAs?: string;
  /** A key of `labels` whose value no other held terminal may carry under that key (ALREADY_EXISTS). */
  uniqueLabel?: string;
}

/** The limits and collaborators a registry works with. */
export interface RegistryOptions {
  launcher: ProcessLauncher;
  host: RunnerHost;
  budget: RetentionBudget;
  retainBytes: number;
  maxTerminals: number;
  closeGraceMs: number;
  metrics?: RunnerMetrics;
  /** Which accounts spawns may run as; without it, only the runner's own. */
  runAs?: RunAsPolicy;
  /** The change journal's bounds (default DEFAULT_WATCH_LIMITS). */
  watch?: WatchLimits;
}

/** The policy of a registry that was given none: `run_as` is refused. */
const NO_OTHER_ACCOUNTS = new RunAsPolicy({ allowed: false, allowRoot: false });

/** Every terminal this runner holds, by id, from spawn until close, and the journal of changes to their records. */
export class TerminalRegistry {
  private readonly terminals = new Map<string, Terminal>();
  /** Every change to a held terminal's record, in order, for Watch. */
  readonly journal: ChangeJournal;

  constructor(private readonly options: RegistryOptions) {
    this.journal = new ChangeJournal(options.watch);
  }

  /** How many terminals are held (running or exited, not yet closed). */
  get size(): number {
    return this.terminals.size;
  }

  /** Creates a terminal and starts its process. */
  spawn(request: SpawnRequestOptions): Terminal {
    const id = request.id || randomUUID();
    if (this.terminals.has(id)) throw new RunnerError("already_exists", `terminal ${id} already exists`);
    // Checked and taken without a pause between (spawn never awaits), so of concurrent spawns one wins.
    if (request.uniqueLabel !== undefined) this.checkUnique(request.uniqueLabel, request.labels);
    if (this.terminals.size >= this.options.maxTerminals) {
      throw new RunnerError("resource_exhausted", `the runner holds its maximum of ${this.options.maxTerminals} terminals`);
    }
    const isPty = this.resolveMode(request.mode);
    const account = (this.options.runAs ?? NO_OTHER_ACCOUNTS).accountFor(request.runAs ?? "");
    const plan = planSpawn({ ...request, isPty, account }, this.options.host);
    const { metrics } = this.options;
    const log = new OutputLog(this.options.retainBytes, this.options.budget, metrics?.logCounters());
    const terminal = new Terminal(id, log, plan, isPty, request, request.labels);
    this.terminals.set(id, terminal);
    try {
      terminal.start(this.options.launcher);
    } catch (err) {
      this.terminals.delete(id);
      terminal.release();
      throw err;
    }
    terminal.onRecordChange((changed, change, previousLabels) => this.journal.append(change, changed.snapshot(), previousLabels));
    this.journal.append("spawned", terminal.snapshot());
    if (metrics) {
      metrics.spawns.inc({ mode: isPty ? "pty" : "pipes", outcome: plan.failure ? "failed_to_start" : "started" });
      void terminal.whenExited().then(() => {
        const exit = terminal.snapshot().exit!;
        metrics.exits.inc({ code: exit.signal || String(exit.exitCode) });
      });
    }
    return terminal;
  }

  /** The terminal with this id; NOT_FOUND otherwise. */
  get(id: string): Terminal {
    const terminal = this.terminals.get(id);
    if (!terminal) throw new RunnerError("not_found", `no terminal with id "${id}"`);
    return terminal;
  }

  /** Terminals whose labels match the selector, oldest first. */
  list(selector: Record<string, string>): Terminal[] {
    return [...this.terminals.values()].filter((terminal) => terminal.matches(selector));
  }

  /** Terminates a terminal's process group and releases it; returns how it was when released. */
  async close(id: string, graceMs = this.options.closeGraceMs): Promise<TerminalSnapshot> {
    const terminal = this.get(id);
    await terminal.close(graceMs);
    const snapshot = terminal.snapshot();
    if (this.terminals.get(id) === terminal) {
      this.terminals.delete(id);
      terminal.release();
    }
    return snapshot;
  }

  /** Closes every terminal at once (the runner is shutting down). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.terminals.keys()].map((id) => this.close(id)));
  }

  private checkUnique(key: string, labels: Record<string, string>): void {
    const value = labels[key];
    if (value === undefined) throw new RunnerError("invalid_argument", `unique_label ${JSON.stringify(key)} names no label of this spawn`);
    for (const held of this.terminals.values()) {
      if (held.matches({ [key]: value })) {
        throw new RunnerError("already_exists", `terminal ${held.id} already holds label ${JSON.stringify(key)} with this value`);
      }
    }
  }

  private resolveMode(mode: TerminalMode): boolean {
    if (mode === "pipes") return false;
    if (mode === "pty" && !this.options.launcher.ptyAvailable) {
      throw new RunnerError("failed_precondition", "this runner cannot open pseudoterminals (node-pty did not load); use pipes");
    }
    return this.options.launcher.ptyAvailable;
  }
}
