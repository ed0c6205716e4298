import { randomUUID } from "node:crypto";
import { createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { spawnRaw, type RawTerminal } from "../raw-pty.js";
import { SOCKET_BACKLOG_BYTES } from "./bare-wire.js";

/**
 * The pty host of the two-process shape with connect in it and nothing else: an h2c server answering
 * the runner's own Spawn, Attach and WriteStream (proto/terminal/v1) with connect's handler, each
 * terminal a node-pty. No log, no offsets, no marks, no checks: what the RPC layer alone costs a
 * keystroke. Attach sends each read as one message; a terminal pauses while SOCKET_BACKLOG_BYTES wait
 * unsent (the bare shapes' own backlog). Started by bench/floor.ts; the shell environment is this
 * process's own.
 */

/** A terminal and its output not yet sent: kept from the spawn on, so nothing printed before Attach is lost. */
class HostedTerminal {
  private waiting: Buffer[] = [];
  private held = 0;
  private wake: (() => void) | undefined;

  constructor(readonly terminal: RawTerminal) {
    terminal.onData((text) => {
      const data = Buffer.from(text, "utf8");
      this.waiting.push(data);
      this.held += data.length;
      if (this.held >= SOCKET_BACKLOG_BYTES) terminal.pty.pause();
      this.wake?.();
    });
  }

  /** Resolves once output waits, or `wakeUp` is called. */
  async ready(): Promise<void> {
    if (this.waiting.length > 0) return;
    await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
  }

  /** Ends a wait for output (the call was cancelled). */
  wakeUp(): void {
    this.wake?.();
  }

  /** The output waiting, taken: the terminal reads on. */
  take(): Buffer[] {
    const taken = this.waiting;
    this.waiting = [];
    this.held = 0;
    this.terminal.pty.resume();
    return taken;
  }
}

const terminals = new Map<string, HostedTerminal>();

const hosted = (id: string): HostedTerminal => {
  const terminal = terminals.get(id);
  if (!terminal) throw new ConnectError(`no terminal ${id}`, Code.NotFound);
  return terminal;
};

const handler = connectNodeAdapter({
  acceptCompression: [],
  routes: (router) =>
    router.service(TerminalService, {
      spawn(request) {
        const id = randomUUID();
        const [file = "/bin/sh", ...args] = request.argv;
        terminals.set(id, new HostedTerminal(spawnRaw(file, args, process.env)));
        return { terminal: { id } };
      },
      async *attach(request, context) {
        const terminal = hosted(request.id);
        context.signal.addEventListener("abort", () => terminal.wakeUp(), { once: true });
        try {
          while (!context.signal.aborted) {
            await terminal.ready();
            for (const data of terminal.take()) yield { event: { case: "output", value: { data } } };
          }
        } finally {
          terminal.terminal.kill();
          terminals.delete(request.id);
        }
      },
      async writeStream(requests) {
        for await (const { id, data } of requests) hosted(id).terminal.write(Buffer.from(data).toString("utf8"));
        return {};
      },
    }),
});

const server = createServer(handler);
server.on("connection", (socket) => socket.setNoDelay(true));
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
