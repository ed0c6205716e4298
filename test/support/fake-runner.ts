import { clone, create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { FollowMux } from "../../gateway/runners/follow-mux.js";
import {
  AttachResponseSchema,
  ChangeKind,
  TerminalInfoSchema,
  TerminalService,
  TerminalState,
  WatchResponseSchema,
  type TerminalInfo,
  type WatchResponse,
} from "../../gen/terminal/v1/terminal_pb.js";

/** An Attach event as a fake terminal's test script pushes it. */
export type FakeEvent = MessageInitShape<typeof AttachResponseSchema>;

/** One terminal of the fake runner: its description, what was written to it, and the events its Attach streams deliver. */
export interface FakeTerminal {
  info: TerminalInfo;
  /** Every input byte, in the order the runner received it. */
  input: number[];
  /** Every call made to it besides input, in order (`resize 100x30`, `clear`, `labels {...}`, `close`, `signal SIGTERM`). */
  calls: string[];
  /** Every Attach request made to it, in order: where it started and whether it asked for shell marks to be stripped. */
  attaches: Array<{ fromOffset: bigint; stripShellMarks: boolean }>;
  /** Delivers an event to every open Attach stream (and to later ones, from their offset); output without an end offset covers its own bytes only. */
  push(event: FakeEvent): void;
  /** Delivers an event as a runner from before `end_offset` sends it: output without one. */
  pushAsOlderRunner(event: FakeEvent): void;
  /** Ends every open Attach stream with an error of this code, as a runner going away would. */
  breakStreams(code: Code): void;
  /** Changes the record as the runner would (`fields` merged into its info, labels merged), with the next revision, and tells watchers. */
  change(kind: ChangeKind, fields?: Partial<Pick<TerminalInfo, "cols" | "rows" | "title" | "cwd" | "state" | "exitCode" | "signal">> & { labels?: Record<string, string> }): void;
}

/** A runner in memory: the generated TerminalService over a router transport, with terminals a test drives by hand. */
export interface FakeRunner {
  readonly url: string;
  readonly terminals: ReturnType<typeof createClient<typeof TerminalService>>;
  readonly follows: FollowMux;
  readonly health: ReturnType<typeof createClient<typeof Health>>;
  /** The fake's terminals by id. */
  readonly byId: Map<string, FakeTerminal>;
  /** Adds a terminal as if another gateway had spawned it (for adoption). */
  add(info: MessageInitShape<typeof TerminalInfoSchema> & { id: string }): FakeTerminal;
  /** When set, every Spawn fails with this code (a runner out of descriptors says RESOURCE_EXHAUSTED). */
  refuseSpawns: Code | undefined;
  /** Ends every open Watch stream with an error of this code. */
  breakWatches(code: Code): void;
  /** Every Watch request made, in order: the epoch and sequence it resumed from. */
  readonly watches: Array<{ resumeEpoch: string; resumeAfterSequence: bigint }>;
  /** Starts over as a restarted runner would: a new epoch, no terminals, no changes; open streams break. */
  restart(): void;
}

/**
 * A fake runner: Spawn makes a terminal whose events the test pushes; List, Get, Write(Stream),
 * Resize, Clear, SetLabels (conditional on a revision), Signal and Close act on it, and Watch
 * streams its record (the full list, then every change; resumable by sequence).
 */
export function createFakeRunner(url = "http://fake-runner.invalid"): FakeRunner {
  const byId = new Map<string, FakeTerminal & { events: FakeEvent[]; wake: Set<(err?: Error) => void> }>();
  let next = 1;
  const journal: WatchResponse[] = [];
  let epoch = "fake-epoch";
  const watchWakers = new Set<(err?: Error) => void>();
  const record = (kind: ChangeKind, info: TerminalInfo): void => {
    journal.push(create(WatchResponseSchema, { sequence: BigInt(journal.length + 1), event: { case: "changed", value: { kind, terminal: clone(TerminalInfoSchema, info) } } }));
    for (const wake of [...watchWakers]) wake();
  };
  const add = (fields: MessageInitShape<typeof TerminalInfoSchema> & { id: string }): FakeTerminal => {
    const terminal = {
      info: create(TerminalInfoSchema, { pid: 1000 + next, isPty: true, title: "sh", cwd: "/tmp", cols: 80, rows: 24, state: TerminalState.RUNNING, revision: 1n, ...fields }),
      input: [] as number[],
      calls: [] as string[],
      attaches: [] as FakeTerminal["attaches"],
      events: [] as FakeEvent[],
      wake: new Set<(err?: Error) => void>(),
      push(event: FakeEvent) {
        terminal.events.push(withEndOffset(event));
        for (const wake of [...terminal.wake]) wake();
      },
      pushAsOlderRunner(event: FakeEvent) {
        terminal.events.push(create(AttachResponseSchema, event));
        for (const wake of [...terminal.wake]) wake();
      },
      breakStreams(code: Code) {
        for (const wake of [...terminal.wake]) wake(new ConnectError("stream broken", code));
      },
      change(kind: ChangeKind, fields: Partial<TerminalInfo> & { labels?: Record<string, string> } = {}) {
        const { labels, ...rest } = fields;
        Object.assign(terminal.info, rest);
        if (labels) Object.assign(terminal.info.labels, labels);
        terminal.info.revision++;
        record(kind, terminal.info);
      },
    };
    byId.set(fields.id, terminal);
    record(ChangeKind.SPAWNED, terminal.info);
    return terminal;
  };
  const get = (id: string): FakeTerminal & { events: FakeEvent[]; wake: Set<(err?: Error) => void> } => {
    const terminal = byId.get(id);
    if (!terminal) throw new ConnectError(`no terminal ${id}`, Code.NotFound);
    return terminal;
  };
  const transport = createRouterTransport(({ service }) => {
    service(TerminalService, {
      spawn(request) {
        if (fake.refuseSpawns !== undefined) throw new ConnectError("the fake runner refuses spawns", fake.refuseSpawns);
        const id = request.id || `fake-${next++}`;
        const unique = request.uniqueLabel && request.labels[request.uniqueLabel];
        if (unique !== undefined && unique !== "" && [...byId.values()].some((other) => other.info.labels[request.uniqueLabel] === unique)) {
          throw new ConnectError(`a terminal already carries ${request.uniqueLabel}=${unique}`, Code.AlreadyExists);
        }
        const terminal = add({ id, title: request.title || "sh", cwd: request.cwd || "/tmp", cols: request.cols ?? 80, rows: request.rows ?? 24, labels: request.labels });
        return { terminal: terminal.info };
      },
      async *attach(request, context) {
        const terminal = get(request.id);
        terminal.attaches.push({ fromOffset: request.fromOffset, stripShellMarks: request.stripShellMarks });
        for (let index = 0; ; index++) {
          while (index >= terminal.events.length) {
            await new Promise<void>((resolve, reject) => {
              const onAbort = (): void => wake(context.signal.reason as Error);
              const wake = (err?: Error): void => {
                terminal.wake.delete(wake);
                context.signal.removeEventListener("abort", onAbort);
                if (err) reject(err);
                else resolve();
              };
              terminal.wake.add(wake);
              context.signal.addEventListener("abort", onAbort, { once: true });
            });
          }
          const event = terminal.events[index]!;
          if (BigInt(event.offset ?? 0) < request.fromOffset && event.event?.case === "output") continue;
          yield event;
          if (event.event?.case === "exited") return;
        }
      },
      write(request) {
        get(request.id).input.push(...request.data);
        return {};
      },
      async writeStream(requests) {
        let writes = 0n;
        for await (const request of requests) {
          get(request.id).input.push(...request.data);
          writes++;
        }
        return { writes };
      },
      resize(request) {
        const terminal = get(request.id);
        terminal.calls.push(`resize ${request.cols}x${request.rows}`);
        if (terminal.info.cols !== request.cols || terminal.info.rows !== request.rows) terminal.change(ChangeKind.RESIZED, { cols: request.cols, rows: request.rows });
        return {};
      },
      signal(request) {
        get(request.id).calls.push(`signal ${request.signal}`);
        return {};
      },
      clear(request) {
        get(request.id).calls.push("clear");
        return {};
      },
      setLabels(request) {
        const terminal = get(request.id);
        if (request.expectedRevision !== undefined && request.expectedRevision !== terminal.info.revision) {
          throw new ConnectError(`revision ${terminal.info.revision}, not ${request.expectedRevision}`, Code.Aborted);
        }
        terminal.calls.push(`labels ${JSON.stringify(request.set)}`);
        terminal.change(ChangeKind.LABELS, { labels: request.set });
        return { terminal: clone(TerminalInfoSchema, terminal.info) };
      },
      get: (request) => ({ terminal: get(request.id).info }),
      list: () => ({ terminals: [...byId.values()].map((terminal) => terminal.info) }),
      close(request) {
        const terminal = get(request.id);
        terminal.calls.push("close");
        byId.delete(request.id);
        terminal.change(ChangeKind.CLOSED, { state: TerminalState.CLOSED });
        return { terminal: terminal.info };
      },
      async *watch(request, context) {
        fake.watches.push({ resumeEpoch: request.resumeEpoch, resumeAfterSequence: request.resumeAfterSequence });
        let index: number;
        if (request.resumeEpoch === epoch) {
          index = Number(request.resumeAfterSequence);
          yield { sequence: request.resumeAfterSequence, event: { case: "synced", value: { epoch, resumed: true } } };
        } else {
          index = journal.length;
          const sequence = BigInt(index);
          yield { sequence, event: { case: "listed", value: { terminals: [...byId.values()].map((terminal) => clone(TerminalInfoSchema, terminal.info)) } } };
          yield { sequence, event: { case: "synced", value: { epoch, restarted: request.resumeEpoch !== "" } } };
        }
        for (; ; index++) {
          while (index >= journal.length) {
            await new Promise<void>((resolve, reject) => {
              const onAbort = (): void => wake(context.signal.reason as Error);
              const wake = (err?: Error): void => {
                watchWakers.delete(wake);
                context.signal.removeEventListener("abort", onAbort);
                if (err) reject(err);
                else resolve();
              };
              watchWakers.add(wake);
              context.signal.addEventListener("abort", onAbort, { once: true });
            });
          }
          yield journal[index]!;
        }
      },
    });
    service(Health, {
      check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }),
      async *watch() {
        yield { status: HealthCheckResponse_ServingStatus.SERVING };
      },
    });
  });
  const terminals = createClient(TerminalService, transport);
  const fake: FakeRunner = {
    url,
    terminals,
    // The fake has no Follow: following falls back to one Attach per terminal, as with a runner from before it.
    follows: new FollowMux(terminals),
    health: createClient(Health, transport),
    byId,
    add,
    refuseSpawns: undefined,
    watches: [],
    breakWatches(code: Code) {
      for (const wake of [...watchWakers]) wake(new ConnectError("watch broken", code));
    },
    restart() {
      epoch = `fake-epoch-${next++}`;
      const gone = [...byId.values()];
      byId.clear();
      journal.length = 0;
      for (const terminal of gone) terminal.breakStreams(Code.Unavailable);
      fake.breakWatches(Code.Unavailable);
    },
  };
  return fake;
}

/** Output as the runner sends it: with the end of the log range it covers, by default its own bytes (nothing stripped). */
function withEndOffset(event: FakeEvent): FakeEvent {
  const message = create(AttachResponseSchema, event);
  if (message.event.case === "output" && message.event.value.endOffset === 0n) message.event.value.endOffset = message.offset + BigInt(message.event.value.data.length);
  return message;
}
