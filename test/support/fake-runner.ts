import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { AttachResponseSchema, TerminalInfoSchema, TerminalService, type TerminalInfo } from "../../gen/terminal/v1/terminal_pb.js";

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
}

/** A runner in memory: the generated TerminalService over a router transport, with terminals a test drives by hand. */
export interface FakeRunner {
  readonly url: string;
  readonly terminals: ReturnType<typeof createClient<typeof TerminalService>>;
  readonly health: ReturnType<typeof createClient<typeof Health>>;
  /** The fake's terminals by id. */
  readonly byId: Map<string, FakeTerminal>;
  /** Adds a terminal as if another gateway had spawned it (for adoption). */
  add(info: MessageInitShape<typeof TerminalInfoSchema> & { id: string }): FakeTerminal;
  /** When set, every Spawn fails with this code (a runner out of descriptors says RESOURCE_EXHAUSTED). */
  refuseSpawns: Code | undefined;
}

/** A fake runner: Spawn makes a terminal whose events the test pushes; List, Write(Stream), Resize, Clear, SetLabels, Signal and Close act on it. */
export function createFakeRunner(url = "http://fake-runner.invalid"): FakeRunner {
  const byId = new Map<string, FakeTerminal & { events: FakeEvent[]; wake: Set<(err?: Error) => void> }>();
  let next = 1;
  const add = (fields: MessageInitShape<typeof TerminalInfoSchema> & { id: string }): FakeTerminal => {
    const terminal = {
      info: create(TerminalInfoSchema, { pid: 1000 + next, isPty: true, title: "sh", cwd: "/tmp", cols: 80, rows: 24, ...fields }),
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
    };
    byId.set(fields.id, terminal);
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
        get(request.id).calls.push(`resize ${request.cols}x${request.rows}`);
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
        terminal.calls.push(`labels ${JSON.stringify(request.set)}`);
        Object.assign(terminal.info.labels, request.set);
        return { terminal: terminal.info };
      },
      get: (request) => ({ terminal: get(request.id).info }),
      list: () => ({ terminals: [...byId.values()].map((terminal) => terminal.info) }),
      close(request) {
        const terminal = get(request.id);
        terminal.calls.push("close");
        byId.delete(request.id);
        return { terminal: terminal.info };
      },
    });
    service(Health, {
      check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }),
      async *watch() {
        yield { status: HealthCheckResponse_ServingStatus.SERVING };
      },
    });
  });
  const fake: FakeRunner = { url, terminals: createClient(TerminalService, transport), health: createClient(Health, transport), byId, add, refuseSpawns: undefined };
  return fake;
}

/** Output as the runner sends it: with the end of the log range it covers, by default its own bytes (nothing stripped). */
function withEndOffset(event: FakeEvent): FakeEvent {
  const message = create(AttachResponseSchema, event);
  if (message.event.case === "output" && message.event.value.endOffset === 0n) message.event.value.endOffset = message.offset + BigInt(message.event.value.data.length);
  return message;
}
