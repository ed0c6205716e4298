import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { connect, createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sleep } from "../support.js";

/** Where the bench installs and keeps the peers it measures (wetty from npm, sshd's keys and config); reused from run to run. */
export const PEERS_DIR = process.env.BENCH_PEERS_DIR ?? join(tmpdir(), "ahp-bench-peers");

/** How long a peer may take to start listening: wetty loads express and socket.io, sshd reads its keys. */
const START_TIMEOUT_MS = 20_000;
/** Pause between attempts to reach a port that is not listening yet. */
const POLL_MS = 50;
/** Characters of a peer's stderr kept for the reason it is skipped. */
const STDERR_TAIL_CHARS = 600;

/** A port free on 127.0.0.1 now, for a peer that cannot be told to pick one and say which. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), done(true)));
    socket.once("error", () => done(false));
  });
}

/** A peer's server process, started. */
export interface PeerProcess {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a peer's server and resolves once it accepts connections on `port`; rejects with its stderr when it exits or never listens. `stop` sends `stopSignal`. */
export async function startPeer(file: string, args: string[], port: number, options: SpawnOptions, stopSignal: NodeJS.Signals = "SIGTERM"): Promise<PeerProcess> {
  const child = spawn(file, args, { ...options, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr = (stderr + text).slice(-STDERR_TAIL_CHARS)));
  if (process.env.BENCH_LOGS) child.stderr!.on("data", (text: string) => process.stderr.write(text));
  let exit: string | undefined;
  child.once("error", (error) => (exit = error.message));
  child.once("exit", (code, signal) => (exit = `exited with ${code ?? signal}`));
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null || exit) return done();
      child.once("exit", () => done());
      child.kill(stopSignal);
    });
  const deadline = performance.now() + START_TIMEOUT_MS;
  while (!(await accepts(port))) {
    if (exit) throw new Error(`${file} ${exit}: ${stderr.trim()}`);
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`${file} did not listen on port ${port} within ${START_TIMEOUT_MS} ms: ${stderr.trim()}`);
    }
    await sleep(POLL_MS);
  }
  return { child, stop };
}
