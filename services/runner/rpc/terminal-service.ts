import { ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";
import { attachEvents, type AttachEvent } from "../terminal/attach-stream.js";
import { attachResponseFrom } from "./attach-response-from.js";
import { connectErrorFrom } from "./connect-error.js";
import { followStream } from "./follow-stream.js";
import { redactedEnvironment } from "../../../lib/secret-names.js";
import type { Logger } from "../../../lib/logger.js";
import { parseSignalName } from "../process/signals.js";
import { checkedSize, checkLabels, signalTargetFrom, spawnOptionsFromRequest } from "./spawn-request.js";
import { terminalInfoFromSnapshot } from "./terminal-info.js";
import { watchResponseFrom } from "./watch-response.js";
import { watchEvents } from "../terminal/watch-stream.js";
import type { RunnerMetrics } from "../metrics.js";
import type { DescriptorLimit } from "../process/descriptor-limit.js";
import type { SpawnGate } from "../spawn/spawn-gate.js";
import type { TerminalRegistry } from "../terminal/terminal-registry.js";

/** What the RPC boundary needs: the terminals, how many may be starting at once, the heartbeat interval for Attach, Watch and Follow, and a logger for unexpected errors. */
export interface TerminalServiceOptions {
  registry: TerminalRegistry;
  spawnGate: SpawnGate;
  /** Refuses spawns when descriptors run out. */
  descriptors: DescriptorLimit;
  heartbeatMs: number;
  log: Logger;
  metrics?: RunnerMetrics;
}

/** The RPC boundary of the runner: checks requests, calls the registry, and turns every failure into a precise code. */
export function createTerminalService({ registry, spawnGate, descriptors, heartbeatMs, log, metrics }: TerminalServiceOptions): ServiceImpl<typeof TerminalService> {
  const writeInput = (request: { id: string; data: Uint8Array; eof: boolean }): void => {
    registry.get(request.id).write(Buffer.from(request.data), request.eof);
    metrics?.inputBytes.inc(request.data.length);
  };
  const guard = async <T>(rpc: string, body: () => T | Promise<T>): Promise<T> => {
    try {
      return await body();
    } catch (err) {
      throw connectErrorFrom(err, log, rpc);
    }
  };
  return {
    spawn: (request, context) =>
      guard("Spawn", async () => {
        const options = spawnOptionsFromRequest(request);
        // A caller that gave up while waiting (a deadline, a cancel) gets its own reason back.
        const terminal = await spawnGate.run(() => descriptors.spawn(() => registry.spawn(options)), context.signal).catch((err: unknown) => {
          throw context.signal.aborted ? ConnectError.from(context.signal.reason) : err;
        });
        // A command line or an environment value may carry a secret (curl -H 'Authorization: …'): only at debug, names that look secret without their values.
        const snapshot = terminal.snapshot();
        const { pid, argv, cwd, runAs } = snapshot;
        log.info({ terminal: terminal.id, pid, isPty: terminal.isPty, runAs: runAs || undefined }, "spawned");
        // The redacted copy of the environment is only made for a log that will write it.
        if (log.isLevelEnabled("debug")) log.debug({ terminal: terminal.id, argv, cwd, env: redactedEnvironment(options.env) }, "spawned with");
        return { terminal: terminalInfoFromSnapshot(snapshot) };
      }),
    async *attach(request, context) {
      let events: AsyncGenerator<AttachEvent>;
      metrics?.subscribers.inc();
      try {
        events = attachEvents(registry.get(request.id), {
          fromOffset: Number(request.fromOffset),
          untilOffset: request.untilOffset === undefined ? undefined : Number(request.untilOffset),
          follow: request.follow,
          stripShellMarks: request.stripShellMarks,
          heartbeatMs,
          signal: context.signal,
        });
        for await (const event of events) yield attachResponseFrom(event);
      } catch (err) {
        // A caller that went away (or a server shutting down) is not an error of the runner's.
        if (context.signal.aborted) throw context.signal.reason;
        throw connectErrorFrom(err, log, "Attach");
      } finally {
        metrics?.subscribers.dec();
      }
    },
    write: (request) => guard("Write", () => (writeInput(request), {})),
    writeStream: (requests) =>
      guard("WriteStream", async () => {
        let writes = 0n;
        for await (const request of requests) {
          writeInput(request);
          writes++;
        }
        return { writes };
      }),
    resize: (request) =>
      guard("Resize", () => {
        const { cols, rows } = checkedSize(request.cols, request.rows);
        registry.get(request.id).resize(cols, rows);
        return {};
      }),
    signal: (request) =>
      guard("Signal", () => {
        const terminal = registry.get(request.id);
        terminal.signal(parseSignalName(request.signal), signalTargetFrom(request.target));
        return {};
      }),
    clear: (request) => guard("Clear", () => (registry.get(request.id).clear(), {})),
    setLabels: (request) =>
      guard("SetLabels", () => {
        const terminal = registry.get(request.id);
        const merged: Record<string, string> = { ...terminal.snapshot().labels, ...request.set };
        for (const key of request.remove) delete merged[key];
        checkLabels(merged);
        terminal.setLabels(request.set, request.remove, request.expectedRevision === undefined ? undefined : Number(request.expectedRevision));
        return { terminal: terminalInfoFromSnapshot(terminal.snapshot()) };
      }),
    get: (request) => guard("Get", () => ({ terminal: terminalInfoFromSnapshot(registry.get(request.id).snapshot()) })),
    list: (request) =>
      guard("List", () => ({
        terminals: registry.list(request.labelSelector).map((terminal) => terminalInfoFromSnapshot(terminal.snapshot())),
      })),
    getScreen: (request) =>
      guard("GetScreen", async () => {
        const endOffset = request.endOffset === undefined ? undefined : Number(request.endOffset);
        const screen = await registry.get(request.id).screen(endOffset, request.scrollbackLines, request.eventsAtEnd);
        return {
          data: screen.data,
          cols: screen.cols,
          rows: screen.rows,
          endOffset: BigInt(screen.endOffset),
          commands: screen.commands.map(({ commandId, line, exitCode }) => ({ commandId, line, exitCode })),
        };
      }),
    close: (request) =>
      guard("Close", async () => {
        const snapshot = await registry.close(request.id, request.graceMs || undefined);
        log.info({ terminal: request.id, exit: snapshot.exit }, "closed");
        return { terminal: terminalInfoFromSnapshot(snapshot) };
      }),
    async *watch(request, context) {
      const resume = request.resumeEpoch ? { epoch: request.resumeEpoch, afterSequence: Number(request.resumeAfterSequence) } : undefined;
      try {
        const events = watchEvents(registry.journal, registry, { selector: request.labelSelector, resume, heartbeatMs, signal: context.signal });
        for await (const event of events) yield watchResponseFrom(event);
      } catch (err) {
        if (context.signal.aborted) throw context.signal.reason;
        throw connectErrorFrom(err, log, "Watch");
      }
    },
    follow: (requests, context) => followStream(requests, context, { registry, heartbeatMs, log, metrics }),
  };
}
