import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { freePort } from "../../lib/listen.js";
import { eventually, succeeds } from "./eventually.js";

/** Debian's haproxy package installs it here (.ci/run installs the package). */
export const HAPROXY = "/usr/sbin/haproxy";
/** Why tests that balance through haproxy are skipped here, or undefined when they run. */
export const HAPROXY_SKIP_REASON = spawnSync(HAPROXY, ["-v"]).status === 0 ? undefined : `SKIPPED: ${HAPROXY} is not installed (apt-get install haproxy; .ci/run installs it)`;

/** How often each backend's readiness is checked: a killed backend is out after two failed checks. */
const CHECK_INTERVAL_MS = 200;
/** How long haproxy may take to listen once started. */
const START_TIMEOUT_MS = 5_000;
/** Attempts at starting on a free port: another process may take the port between finding and binding it. */
const START_ATTEMPTS = 3;

/** A server haproxy balances over. */
export interface HaproxyBackend {
  host: string;
  port: number;
  /** Its name in haproxy's stats (`b0`, `b1`, … by default). */
  name?: string;
}

export interface HaproxyOptions {
  backends: HaproxyBackend[];
  /** The HTTP path that answers 200 while a backend may take connections (`/readyz`, the gateway's readiness). */
  checkPath?: string;
  /** How the next connection's backend is chosen (`leastconn` by default, as deploy/haproxy.cfg does). */
  balance?: "leastconn" | "roundrobin";
}

/** The real haproxy, in TCP mode in front of backends, as a Kubernetes Service or deploy/compose.yaml's balancer is. */
export interface HaproxyBalancer {
  /** The port it listens on, on 127.0.0.1. */
  port: number;
  /** Each backend's state by name as haproxy's stats give it: `UP`, `DOWN`, `UP 1/2` (going down), `MAINT`, … */
  serverStates(): Promise<Record<string, string>>;
  /** Stops haproxy, closing every connection through it, and removes its scratch files. */
  stop(): Promise<void>;
}

/** haproxy's configuration: TCP mode, checks over HTTP on `checkPath`, a failed connection retried on another backend. */
function haproxyConfig({ backends, checkPath = "/readyz", balance = "leastconn" }: HaproxyOptions, port: number, socket: string): string {
  return [
    "global",
    "  maxconn 4096",
    `  stats socket ${socket} mode 600 level admin`,
    "defaults",
    "  mode tcp",
    "  timeout connect 1s",
    "  timeout client 1h",
    "  timeout server 1h",
    "  timeout check 2s",
    // A connection refused by a backend not yet marked down goes to another one.
    "  retries 2",
    "  option redispatch 1",
    "frontend balanced",
    `  bind 127.0.0.1:${port}`,
    "  default_backend backends",
    "backend backends",
    `  balance ${balance}`,
    "  option httpchk",
    `  http-check send meth GET uri ${checkPath} ver HTTP/1.1 hdr Host localhost`,
    "  http-check expect status 200",
    `  default-server check inter ${CHECK_INTERVAL_MS} fall 2 rise 1`,
    ...backends.map((backend, i) => `  server ${backend.name ?? `b${i}`} ${backend.host}:${backend.port}`),
    "",
  ].join("\n");
}

/** Sends one command to haproxy's stats socket and resolves with its whole answer. */
function askStatsSocket(path: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const socket = connect(path, () => socket.end(`${command}\n`));
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.once("end", () => resolve(answer));
    socket.once("error", reject);
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:port now. */
function accepting(port: number): Promise<boolean> {
  return succeeds(
    () =>
      new Promise<void>((resolve, reject) => {
        const probe = connect(port, "127.0.0.1", () => (probe.destroy(), resolve()));
        probe.once("error", reject);
      }),
  );
}

/** Each backend server's state by name, from the CSV of `show stat`. */
async function serverStates(socket: string): Promise<Record<string, string>> {
  const [header, ...rows] = (await askStatsSocket(socket, "show stat")).trim().split("\n").map((line) => line.split(","));
  const [name, status] = ["svname", "status"].map((column) => header!.indexOf(column));
  return Object.fromEntries(rows.filter((row) => !["FRONTEND", "BACKEND"].includes(row[name!]!)).map((row) => [row[name!]!, row[status!]!]));
}

/**
 * haproxy run on `dir`'s config; resolves once it listens on `port` and its stats socket is there
 * (haproxy may create the socket after the port accepts), or with its stderr when it exited instead.
 */
async function launch(dir: string, port: number, statsSocket: string): Promise<{ stop(): Promise<void> } | { failure: string[] }> {
  const child = spawn(HAPROXY, ["-db", "-f", join(dir, "haproxy.cfg")], { stdio: ["ignore", "ignore", "pipe"] });
  const stderrLines: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => stderrLines.push(line));
  // "close": after its stderr is read to the end, so a failure's reason is in stderrLines.
  const exited = new Promise<void>((done) => child.once("close", () => done()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (running()) child.kill(signal);
    await exited;
  };
  const listening = await eventually(async () => !running() || ((await accepting(port)) && existsSync(statsSocket)), START_TIMEOUT_MS);
  if (running() && listening) return { stop: () => stop("SIGTERM") };
  await stop("SIGKILL");
  return { failure: stderrLines.length ? stderrLines : [`not listening on ${port} with its stats socket after ${START_TIMEOUT_MS} ms`] };
}

/** Starts haproxy in the foreground on a free port of 127.0.0.1 and resolves once it accepts connections. */
export async function startHaproxy(options: HaproxyOptions): Promise<HaproxyBalancer> {
  const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
  const socket = join(dir, "admin.sock");
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    writeFileSync(join(dir, "haproxy.cfg"), haproxyConfig(options, port, socket));
    const started = await launch(dir, port, socket).catch((err: Error) => ({ failure: [err.message] }));
    if ("stop" in started) {
      return {
        port,
        serverStates: () => serverStates(socket),
        async stop() {
          await started.stop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (!started.failure.some((line) => /cannot bind socket/i.test(line)) || attempt === START_ATTEMPTS) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`haproxy did not start: ${started.failure.join("\n")}`);
    }
  }
}
