import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../../gen/grpc/health/v1/health_pb.js";
import { TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";

/** Whether the runner takes new work; flipped to not serving when shutdown begins. */
export class ServingState {
  private serving = true;
  private readonly listeners = new Set<() => void>();

  /** True until shutdown begins. */
  get isServing(): boolean {
    return this.serving;
  }

  /** Marks the runner as shutting down and tells every health watcher. */
  stopServing(): void {
    this.serving = false;
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` on every change until the returned function is called. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Services the health protocol knows by name: the whole server ("") and the terminal service. */
const KNOWN_SERVICES = new Set(["", TerminalService.typeName]);

/** The standard grpc.health.v1 service: SERVING while the runner takes work, NOT_SERVING while it shuts down. */
export function createHealthService(state: ServingState): ServiceImpl<typeof Health> {
  const statusOf = (service: string): Status => {
    if (!KNOWN_SERVICES.has(service)) return Status.SERVICE_UNKNOWN;
    return state.isServing ? Status.SERVING : Status.NOT_SERVING;
  };
  return {
    check(request) {
      if (!KNOWN_SERVICES.has(request.service)) throw new ConnectError(`unknown service "${request.service}"`, Code.NotFound);
      return { status: statusOf(request.service) };
    },
    async *watch(request, context) {
      let last: Status | undefined;
      let wake: () => void = () => {};
      const unsubscribe = state.subscribe(() => wake());
      const onAbort = (): void => wake();
      context.signal.addEventListener("abort", onAbort);
      try {
        while (!context.signal.aborted) {
          if (statusOf(request.service) !== last) {
            last = statusOf(request.service);
            yield { status: last };
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            if (statusOf(request.service) !== last || context.signal.aborted) resolve();
          });
        }
      } finally {
        unsubscribe();
        context.signal.removeEventListener("abort", onAbort);
      }
    },
  };
}
