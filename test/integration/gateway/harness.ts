import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { AUTH_RESOURCE, tokenHolderAccess, usersFileAccess } from "../../../gateway/auth/access.js";
import { UserDirectory } from "../../../gateway/auth/user-directory.js";
import { ClientRegistry } from "../../../gateway/client-registry.js";
import { Connection } from "../../../gateway/connection.js";
import { GatewayHost } from "../../../gateway/host.js";
import { startListener, type Listener } from "../../../gateway/listener.js";
import { RunnerPool } from "../../../gateway/runner-pool.js";
import { createLogger } from "../../../lib/logger.js";
import { startTestRunner, type TestRunner } from "../runner/harness.js";

/** A gateway on port 0 in this process, in front of a real in-process runner with real ptys. */
export interface TestGateway {
  url: string;
  token: string;
  runner: TestRunner;
  /** The gateway's pool (undefined for a host without runners). */
  runners: RunnerPool | undefined;
  host: GatewayHost;
  home: string;
  listener: Listener;
  close(): Promise<void>;
}

/** Starts runner and gateway; terminals run /bin/sh (or `shell`) with a scratch HOME, so no rc file of this machine is read. */
/** Options of a test gateway: its limits, the terminals' shell, and a users file (else the token holder is a member). */
export interface TestGatewayOptions {
  /** False: a host that serves no terminals. */
  withRunner?: boolean;
  onTerminalExit?: (cwd: string) => void;
  scrollbackChars?: number;
  maxFrameBytes?: number;
  shell?: string;
  usersFile?: string;
}

export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const home = mkdtempSync(join(tmpdir(), "gateway-home-"));
  const runner = await startTestRunner({ env: { ...process.env, SHELL: options.shell ?? "/bin/sh", HOME: home, ENV: "", PS1: "$ " } });
  return startGatewayOn(runner, home, options);
}

/** A gateway in front of a runner that already runs (as a restarted gateway would be). */
export async function startGatewayOn(runner: TestRunner, home: string, options: TestGatewayOptions = {}): Promise<TestGateway> {
  const log = createLogger("silent", "gateway");
  const runners = options.withRunner === false ? undefined : await RunnerPool.create([runner.server.url], runner.token, log);
  const host = new GatewayHost({
    runners,
    shell: "/bin/bash",
    onTerminalExit: options.onTerminalExit,
    log,
    scrollbackChars: options.scrollbackChars ?? 200_000,
    defaultDirectory: home,
  });
  const token = "gateway-token";
  const context = {
    host,
    clients: new ClientRegistry(),
    access: options.usersFile ? usersFileAccess(new UserDirectory(options.usersFile, log), AUTH_RESOURCE) : tokenHolderAccess(token, AUTH_RESOURCE),
    log,
    info: { serverInfo: { name: "ahp-terminal-gateway", version: "test" }, defaultDirectory: pathToFileURL(home).href },
  };
  const listener = await startListener({
    host: "127.0.0.1",
    port: 0,
    token,
    maxFrameBytes: options.maxFrameBytes ?? 1024 * 1024,
    accept(socket) {
      const connection = new Connection(socket, context);
      return { onFrame: (text) => connection.receive(text), onClose: () => connection.closedByPeer() };
    },
  });
  return {
    url: listener.url,
    token,
    runner,
    runners,
    host,
    home,
    listener,
    async close() {
      host.close();
      await listener.close();
      await runner.close();
    },
  };
}
