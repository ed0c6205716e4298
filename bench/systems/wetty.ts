import { createRequire } from "node:module";
import { join } from "node:path";
import { BASH_INTEGRATION, BENCH_HOME, profileArgs, shellEnv } from "../support.js";
import { OutputRelay } from "./output-relay.js";
import { freePort, startPeer } from "./peer-process.js";
import { COLS, ROWS, execLine, type TerminalSystem } from "./terminal-system.js";
import { WETTY_DIR, WETTY_VERSION, installWetty } from "./wetty-install.js";

/** What the bench uses of socket.io-client (loaded from WETTY_DIR, so it has no types here). */
interface IoSocket {
  on(event: string, listener: (...args: any[]) => void): IoSocket;
  once(event: string, listener: (...args: any[]) => void): IoSocket;
  emit(event: string, ...args: unknown[]): IoSocket;
  disconnect(): IoSocket;
}
type Io = (url: string, options: Record<string, unknown>) => IoSocket;

/**
 * Characters the client acknowledges at a time, as wetty's page does (its FlowControlClient): the
 * server pauses the pty once 2 MiB are unacknowledged.
 */
const ACK_CHARS = 262_144;

/**
 * wetty@3.2.0, one node process: an HTTP server speaking socket.io, one connection per terminal,
 * each spawning the shell with node-pty. Run as root without --force-ssh it spawns `--command`
 * locally (through `env -S`, which splits it into words); its output comes as `data` events,
 * which the client acknowledges with `commit` as wetty's page does.
 */
export async function wetty(): Promise<TerminalSystem & { version: string }> {
  const { main, socketIoVersion } = installWetty();
  const { io } = createRequire(join(WETTY_DIR, "bench.cjs"))("socket.io-client") as { io: Io };
  const port = await freePort();
  // env -S takes single quotes, so a path with spaces stays one word.
  const command = `bash --rcfile '${BASH_INTEGRATION}'`;
  const args = [...profileArgs("wetty"), main, "--host", "127.0.0.1", "--port", String(port), "--command", command, "--log-level", "warn"];
  // wetty gives its shells its own environment and working directory. It exits on SIGINT (so a BENCH_PROF profile is written), and dies on SIGTERM.
  const server = await startPeer(process.execPath, args, port, { cwd: BENCH_HOME, env: shellEnv("/bin/bash") }, "SIGINT");
  const url = `http://127.0.0.1:${port}`;
  return {
    version: `wetty ${WETTY_VERSION} (socket.io-client ${socketIoVersion}, ${WETTY_DIR})`,
    processes: () => ({ server: [server.child.pid!] }),
    open: async (program) => {
      // The page's socket upgrades to a WebSocket at once; the bench starts there. One terminal per connection.
      const socket = io(url, { path: "/socket.io", transports: ["websocket"], forceNew: true, reconnection: false });
      const relay = new OutputRelay();
      let unacknowledged = 0;
      socket.on("data", (data: string) => {
        relay.push(data);
        unacknowledged += data.length;
        if (unacknowledged >= ACK_CHARS) {
          unacknowledged -= ACK_CHARS;
          socket.emit("commit", ACK_CHARS);
        }
      });
      // The server listens for input only once the pty is spawned, which it says with `login`; the page resizes then too.
      await new Promise<void>((done, fail) => socket.once("login", done).once("connect_error", fail));
      socket.emit("resize", { cols: COLS, rows: ROWS });
      if (program !== "bash") socket.emit("input", execLine(program));
      return {
        send: (text) => void socket.emit("input", text),
        output: relay.output,
        firstOutput: relay.firstOutput,
        // The server kills the pty when its socket disconnects.
        close: async () => void socket.disconnect(),
      };
    },
    stop: () => server.stop(),
  };
}
