import { create } from "@bufbuild/protobuf";
import { SpawnRequestSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { RetentionBudget } from "../../../services/runner/log/retention-budget.js";
import type { ProcessExit, ProcessHandlers, ProcessLauncher, ProcessSpec, TerminalProcess } from "../../../services/runner/process/terminal-process.js";
import { spawnOptionsFromRequest } from "../../../services/runner/rpc/spawn-request.js";
import { TerminalRegistry } from "../../../services/runner/terminal/terminal-registry.js";

/** A process the test drives by hand: it records what it is sent and emits what the test tells it to. */
export class FakeProcess implements TerminalProcess {
  readonly written: Buffer[] = [];
  readonly sizes: Array<[number, number]> = [];
  inputEnded = false;
  paused = false;

  constructor(
    readonly pid: number,
    readonly isPty: boolean,
    readonly spec: ProcessSpec,
    private readonly handlers: ProcessHandlers,
  ) {}

  write(data: Buffer): void {
    this.written.push(Buffer.from(data));
  }

  endInput(): void {
    this.inputEnded = true;
  }

  resize(cols: number, rows: number): void {
    this.sizes.push([cols, rows]);
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  emit(text: string | Buffer): void {
    this.handlers.onData(Buffer.from(text));
  }

  exit(exit: ProcessExit): void {
    this.handlers.onExit(exit);
  }
}

/** A launcher of FakeProcesses; pids start high so they never name a real process group. */
export class FakeLauncher implements ProcessLauncher {
  readonly processes: FakeProcess[] = [];
  failNext: Error | undefined;

  constructor(readonly ptyAvailable = true) {}

  launch(spec: ProcessSpec, handlers: ProcessHandlers, isPty: boolean): TerminalProcess {
    if (this.failNext) {
      const err = this.failNext;
      this.failNext = undefined;
      throw err;
    }
    const process = new FakeProcess(4_000_000 + this.processes.length, isPty, spec, handlers);
    this.processes.push(process);
    return process;
  }

  last(): FakeProcess {
    return this.processes.at(-1)!;
  }
}

/** A registry holding one terminal, `t`, on a FakeProcess, its log retaining `retainBytes`. */
export function fakeTerminal(retainBytes = 1 << 20) {
  const launcher = new FakeLauncher(true);
  const registry = new TerminalRegistry({ launcher, host: { env: { PATH: process.env.PATH }, cwd: "/" }, budget: new RetentionBudget(1 << 30), retainBytes, maxTerminals: 10, closeGraceMs: 0 });
  const terminal = registry.spawn(spawnOptionsFromRequest(create(SpawnRequestSchema, { id: "t", argv: ["sh"] })));
  return { registry, terminal, process: launcher.last() };
}
